/**
 * Zod schemas as OpenAPI 3.1 Schema Objects, hand-written rather than Zod's `z.toJSONSchema` so that
 * the document keeps the layout the golden test pins and the rules below for wrappers and metadata:
 * a walk over each schema's definition (`_zod.def`, Zod core's documented internals).
 * What a schema says beyond its Zod type is Zod's own metadata (`.meta()`, `.describe()`): `id`
 * names a component, any other key (`description`, `type`, `format`, `default`, `example`, ...)
 * is written into the schema object.
 *
 * A schema is documented as the type it wraps, as a request carries it: optional, nullable,
 * default, prefault, readonly and non-optional wrappers are seen through, and a pipe is documented
 * as what it accepts (its input; its output when the input is a preprocessing transform). The
 * wrappers add what they mean: `null` among the types when the whole accepts `null`, the first
 * default found, and their metadata over the metadata of what they wrap. A `type` in the metadata
 * replaces what the walk would say, `null` and the default included (for transforms, whose input
 * the walk cannot describe); the metadata then says all.
 */
import { z } from '../core/zod';

/** A JSON Schema object (OpenAPI 3.1's dialect), or a reference to a component. */
export type SchemaObject = { [key: string]: unknown };

type Meta = { [key: string]: unknown };

/** A schema whose definition is one of Zod's kinds, so that `def.type` narrows `def`. */
const defOf = (schema: z.core.$ZodType) => (schema as z.core.$ZodTypes)._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'nonoptional']);

/** The schema a wrapper or a pipe stands for, or undefined for any other schema. */
function wrapped(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return (def as { innerType: z.core.$ZodType }).innerType;
  if (def.type === 'pipe') return defOf(def.in).type === 'transform' ? def.out : def.in;
  return undefined;
}

/** The schema and every schema it wraps, outermost first. */
function chain(schema: z.core.$ZodType): z.core.$ZodType[] {
  const out = [schema];
  for (let inner = wrapped(schema); inner; inner = wrapped(inner)) out.push(inner);
  return out;
}

/** The metadata of a schema and of what it wraps; an outer schema's value wins, an inner key comes first. */
function metaOf(links: readonly z.core.$ZodType[]): Meta {
  const meta: Meta = {};
  for (const link of [...links].reverse()) Object.assign(meta, z.globalRegistry.get(link));
  return meta;
}

/** The metadata of a schema, with what it wraps. */
export const metadataOf = (schema: z.core.$ZodType): Meta => metaOf(chain(schema));

/** The default of the first `.default()` (else `.prefault()`) a schema wraps. */
function defaultOf(links: readonly z.core.$ZodType[]): unknown {
  for (const kind of ['default', 'prefault']) {
    const link = links.find((s) => defOf(s).type === kind);
    if (link) return (defOf(link) as { defaultValue: unknown }).defaultValue;
  }
  return undefined;
}

/** Whether a schema takes `value` (`undefined`: the value may be absent; `null`: it may be null). */
export const accepts = (schema: z.core.$ZodType, value: null | undefined) => (schema as z.ZodType).safeParse(value).success;

/** JSON Schema's names of Zod's string formats. */
const FORMATS: Record<string, string> = {
  uuid: 'uuid',
  guid: 'uuid',
  email: 'email',
  url: 'uri',
  date: 'date',
  datetime: 'date-time',
  time: 'time',
  duration: 'duration',
  ipv4: 'ipv4',
  ipv6: 'ipv6',
};

/** `{ type }`, with `null` among the types when the schema accepts it. */
const typed = (type: string, nullable: boolean): SchemaObject => ({ type: nullable ? [type, 'null'] : type });

const isNullType = (s: SchemaObject) => Object.keys(s).length === 1 && s.type === 'null';

/** The parameters of a check of `kind` among a schema's checks, if it has one. */
function checkOf(checks: readonly z.core.$ZodCheck[] | undefined, kind: string): Record<string, unknown> | undefined {
  return checks?.find((c) => c._zod.def.check === kind)?._zod.def as Record<string, unknown> | undefined;
}

/** Removes the keys whose value is undefined (the slots nothing filled). */
function compact(schema: SchemaObject): SchemaObject {
  return Object.fromEntries(Object.entries(schema).filter(([, v]) => v !== undefined));
}

/**
 * The Schema Objects of one document: `write` returns a schema object, or a `$ref` to the
 * component a schema with an `id` becomes (written once, where first met; `components` lists them
 * in that order).
 */
export class SchemaWriter {
  readonly components: Record<string, SchemaObject> = {};

  write(schema: z.core.$ZodType): SchemaObject {
    const links = chain(schema);
    const { id, ...meta } = metaOf(links);
    if (typeof id !== 'string') return this.describe(schema, links, meta);
    const ref = { $ref: `#/components/schemas/${id}` };
    if (!(id in this.components)) {
      // Claimed before its content is written: the component keeps its place, and a schema that
      // contains itself refers to itself.
      this.components[id] = ref;
      this.components[id] = this.describe(schema, links, meta);
    }
    return ref;
  }

  /** The schema object of `schema` (whose wrappers are `links`) with its metadata applied. */
  private describe(schema: z.core.$ZodType, links: readonly z.core.$ZodType[], meta: Meta): SchemaObject {
    const inner = links[links.length - 1];
    const shape = meta.type !== undefined ? { type: meta.type } : this.shapeOf(inner, accepts(schema, null), defaultOf(links));
    // A metadata key the shape has a slot for takes that place; the others follow.
    return compact({ ...shape, ...meta });
  }

  /**
   * What a schema's own kind says, with a slot (an undefined value) for each key it may have, so
   * that metadata naming one of them fills it in place.
   */
  private shapeOf(schema: z.core.$ZodType, nullable: boolean, value: unknown): SchemaObject {
    const def = defOf(schema);
    switch (def.type) {
      case 'object':
        return this.objectOf(def, nullable, value);
      case 'null':
        return { type: 'null' };
      case 'unknown':
      case 'any':
        return {};
      default:
        return { ...this.valueShapeOf(schema, nullable), default: value };
    }
  }

  private objectOf(def: z.core.$ZodObjectDef, nullable: boolean, value: unknown): SchemaObject {
    const shape = def.shape as Record<string, z.core.$ZodType>;
    const properties = Object.fromEntries(Object.entries(shape).map(([key, s]) => [key, this.write(s)]));
    // A key is required unless its schema takes an absent value.
    const required = Object.keys(shape).filter((key) => !accepts(shape[key], undefined));
    const out: SchemaObject = { ...typed('object', nullable), properties, default: value };
    if (required.length) out.required = required;
    if (def.catchall) out.additionalProperties = defOf(def.catchall).type === 'never' ? false : this.write(def.catchall);
    return out;
  }

  private valueShapeOf(schema: z.core.$ZodType, nullable: boolean): SchemaObject {
    const def = defOf(schema);
    switch (def.type) {
      case 'string': {
        const { minLength, maxLength, format } = schema as z.ZodString;
        const regex = def.checks?.find(
          (c) => c._zod.def.check === 'string_format' && (c._zod.def as { format?: string }).format === 'regex',
        );
        return {
          ...typed('string', nullable),
          minLength: minLength ?? undefined,
          maxLength: maxLength ?? undefined,
          format: format === null ? undefined : FORMATS[format],
          pattern: regex && (regex._zod.def as unknown as { pattern: RegExp }).pattern.source,
        };
      }
      case 'number': {
        // z.int() is a `safeint`; z.int32(), z.uint32() are integers too.
        const integer = /int/.test((schema as z.ZodNumber).format ?? '');
        const out = typed(integer ? 'integer' : 'number', nullable);
        for (const check of def.checks ?? []) {
          const c = check._zod.def as { check: string; value?: unknown; inclusive?: boolean };
          if (c.check === 'greater_than') out[c.inclusive ? 'minimum' : 'exclusiveMinimum'] = Number(c.value);
          if (c.check === 'less_than') out[c.inclusive ? 'maximum' : 'exclusiveMaximum'] = Number(c.value);
        }
        return out;
      }
      case 'bigint':
        return { ...typed('string', nullable), pattern: '^\\d+$' };
      case 'boolean':
        return typed('boolean', nullable);
      case 'date':
        return { ...typed('string', nullable), format: 'date-time' };
      case 'literal': {
        // Every value, with the JSON types among them (`z.literal(null)` is the null type).
        const values = def.values.filter((v) => v !== undefined).map((v) => (typeof v === 'bigint' ? Number(v) : v));
        const types = [...new Set(values.map((v) => (v === null ? 'null' : typeof v)))];
        if (types.length === 1 && types[0] === 'null') return { type: 'null' };
        if (types.length > 1) return { type: nullable && !types.includes('null') ? [...types, 'null'] : types, enum: values };
        return { ...typed(types[0], nullable), enum: values };
      }
      case 'enum': {
        const values = Object.values(def.entries);
        const numbers = values.filter((v) => typeof v === 'number').length;
        if (numbers && numbers !== values.length)
          throw new Error('OpenAPI: an enum mixes strings and numbers; give it a type with .meta({ type })');
        return { ...typed(numbers ? 'integer' : 'string', nullable), enum: nullable ? [...values, null] : values };
      }
      case 'array':
        return {
          ...typed('array', nullable),
          items: this.write(def.element),
          minItems: checkOf(def.checks, 'min_length')?.minimum,
          maxItems: checkOf(def.checks, 'max_length')?.maximum,
        };
      case 'tuple':
        return { ...typed('array', nullable), prefixItems: def.items.map((s) => this.write(s)) };
      case 'union': {
        // Nested unions are one list; a nullable option makes the whole union nullable instead.
        const options = unionOptions(schema).map((s) => this.write(unwrapNullable(s)));
        if (nullable && !options.some(isNullType)) options.push({ type: 'null' });
        return { anyOf: options };
      }
      case 'intersection': {
        const allOf = { allOf: [this.write(def.left), this.write(def.right)] };
        return nullable ? { anyOf: [allOf, { type: 'null' }] } : allOf;
      }
      case 'record': {
        const values = this.write(def.valueType);
        const keys = defOf(def.keyType);
        if (keys.type === 'enum') {
          const names = Object.values(keys.entries).filter((k): k is string => typeof k === 'string');
          return { ...typed('object', nullable), properties: Object.fromEntries(names.map((k) => [k, values])) };
        }
        return { ...typed('object', nullable), additionalProperties: values };
      }
      case 'lazy':
        return this.write(def.getter());
      default:
        throw new Error(`OpenAPI: a Zod ${def.type} schema cannot be documented by its definition; give it a type with .meta({ type })`);
    }
  }
}

/** The options of a union, nested unions flattened. */
function unionOptions(schema: z.core.$ZodType): z.core.$ZodType[] {
  const def = defOf(schema);
  return def.type === 'union' ? def.options.flatMap(unionOptions) : [schema];
}

function unwrapNullable(schema: z.core.$ZodType): z.core.$ZodType {
  const def = defOf(schema);
  return def.type === 'nullable' ? unwrapNullable(def.innerType) : schema;
}
