/**
 * The model side of list filters: lookups (`author__country__name__iexact`) compiled against the
 * model into plans (tables, columns, relation hops, operator; their types are in filter-plans.ts),
 * once, at generation time; and the filter parameters and mixins of a viewset. The runtime
 * (runtime/query/filters.ts) only applies plans.
 *
 * Specs reach this stage validated (validate/checks/check-lookups.ts reports bad lookups at their
 * file:line:column), so a LookupError here means a caller skipped validation or compiled a lookup of
 * its own.
 */
import { isLookupOperator, LOOKUP_OPERATORS, type LookupOperator } from '@svcgen/runtime/catalogue';
import { TYPE_MIXINS } from '../validate/filter-mixins';
import type { ParamSpec, ViewsetSpec } from '../validate/meta-schema';
import type {
  CasePlan,
  ColumnKind,
  ConditionPlan,
  HopPlan,
  FilterParam,
  LookupPlan,
  MixinName,
  MixinPlan,
  ParamType,
  ResourceFilters,
} from './filter-plans';
import type { Field, FieldType, ManyToMany } from './model';

/* ------------------------------------------------------------------------- the graph */

/** What the compiler needs of a model: its table, column fields (primary key first) and many-to-manys. */
export interface GraphNode {
  model: string;
  table: string;
  pk: Field;
  fields: readonly Field[];
  m2m: readonly ManyToMany[];
}

export type ModelGraph = (model: string) => GraphNode;

/** A graph over the models being built; many-to-manys are resolved on first use. */
export function modelGraph<N extends { model: string; table: string; fields: Field[] }>(
  byModel: ReadonlyMap<string, N>,
  m2mOf: (node: N) => ManyToMany[],
): ModelGraph {
  const nodes = new Map<string, GraphNode>();
  return (model) => {
    let node = nodes.get(model);
    if (!node) {
      const n = byModel.get(model);
      if (!n) throw new LookupError(`unknown model "${model}"`);
      node = { model: n.model, table: n.table, pk: n.fields.find((f) => f.primaryKey) ?? n.fields[0], fields: n.fields, m2m: m2mOf(n) };
      nodes.set(model, node);
    }
    return node;
  };
}

/* ----------------------------------------------------------------------- lookups */

export class LookupError extends Error {}

const KIND: Record<Exclude<FieldType, 'foreign_key'>, ColumnKind> = {
  integer: 'int',
  big_integer: 'bigint',
  float: 'float',
  decimal: 'decimal',
  string: 'text',
  text: 'text',
  email: 'text',
  url: 'text',
  password: 'text',
  uuid: 'uuid',
  boolean: 'bool',
  date: 'date',
  datetime: 'datetime',
  json: 'json',
  list: 'list',
};

function kindOf(f: Field): ColumnKind {
  return f.relation ? kindOf(f.relation.targetPk) : KIND[f.type as Exclude<FieldType, 'foreign_key'>];
}

/**
 * Compiles `field(__field)*(__operator)?` from `model`. Each segment but the last field must be a
 * relation. A foreign key hop whose next field is the related primary key (`category__id`), or a
 * lookup ending at a relation (`category`, `tags__in`), compares the key column itself, without
 * reading the related table.
 */
export function compileLookup(graph: ModelGraph, model: string, lookup: string): LookupPlan {
  const segments = lookup.split('__');
  const fail = (message: string): never => {
    throw new LookupError(`${message} in lookup "${lookup}"`);
  };
  const hops: HopPlan[] = [];
  const chain = [model];
  let node = graph(model);
  let i = 0;
  for (;;) {
    const seg = segments[i];
    const rest = segments.slice(i + 1);
    const field = node.fields.find((f) => f.name === seg);
    const m2m = field ? undefined : node.m2m.find((m) => m.name === seg);
    if (!field && !m2m) {
      const names = [...node.fields.map((f) => f.name), ...node.m2m.map((m) => m.name)];
      return fail(`unknown field "${seg}" (${chain.join(' → ')}; fields: ${names.join(', ')})`);
    }
    if (field && !field.relation) {
      const plan = leaf(node.table, field.column, kindOf(field), field.nullable, rest);
      return field.list ? { ...plan, items: field.list.of } : plan;
    }
    const target = graph(field ? field.relation!.target : m2m!.target);
    const next = rest[0];
    // The walk ends at the relation's key: no next field, an operator, or the related primary key.
    const endsAtKey =
      next === undefined ||
      (isLookupOperator(next) && !hasField(target, next)) ||
      (next === target.pk.name && (rest.length === 1 || isLookupOperator(rest[1])));
    const opRest = next === target.pk.name ? rest.slice(1) : rest;
    if (field) {
      if (endsAtKey) return leaf(node.table, field.column, kindOf(target.pk), field.nullable, opRest);
      hops.push({
        from: `${node.table}.${field.column}`,
        nullable: field.nullable,
        table: target.table,
        select: `${target.table}.${target.pk.column}`,
        many: false,
      });
    } else {
      const m = m2m!;
      const hop: HopPlan = {
        from: `${node.table}.${node.pk.column}`,
        nullable: false,
        table: m.joinTable,
        select: `${m.joinTable}.${m.ownColumn}`,
        many: true,
      };
      hops.push(hop);
      if (endsAtKey) return leaf(m.joinTable, m.otherColumn, kindOf(target.pk), false, opRest);
      hop.join = { table: target.table, on: [`${target.table}.${target.pk.column}`, `${m.joinTable}.${m.otherColumn}`] };
    }
    node = target;
    chain.push(target.model);
    i += 1;
  }

  function leaf(table: string, column: string, kind: ColumnKind, nullable: boolean, rest: string[]): LookupPlan {
    if (rest.length > 1 && isLookupOperator(rest[0])) fail(`nothing may follow the operator "${rest[0]}"`);
    if (rest.length > 0 && !isLookupOperator(rest[0])) {
      fail(
        `unknown operator "${rest[0]}" ("${segments[segments.length - rest.length - 1]}" is not a relation; operators: ${LOOKUP_OPERATORS.join(', ')})`,
      );
    }
    return { hops, column: `${table}.${column}`, kind, nullable, op: (rest[0] as LookupOperator | undefined) ?? 'exact' };
  }
}

function hasField(node: GraphNode, name: string): boolean {
  return node.fields.some((f) => f.name === name) || node.m2m.some((m) => m.name === name);
}

/** Checks a literal value against its operator; `exact: null` becomes `isnull: true`. */
function lookupValue(plan: LookupPlan, lookup: string, value: unknown): { lookup: LookupPlan; value: unknown } {
  const fail = (message: string): never => {
    throw new LookupError(`${message} in lookup "${lookup}"`);
  };
  if (value === null) {
    if (plan.op === 'exact' || plan.op === 'iexact') return { lookup: { ...plan, op: 'isnull' }, value: true };
    fail(`"${plan.op}" cannot compare with null`);
  }
  if (plan.op === 'isnull' && typeof value !== 'boolean') fail('"isnull" takes true or false');
  if (plan.op === 'in' && !Array.isArray(value)) fail('"in" takes a list of values');
  if (plan.op === 'range' && !(Array.isArray(value) && value.length === 2)) fail('"range" takes a list of two values [low, high]');
  if (typeof value === 'object' && !Array.isArray(value)) fail('a lookup value cannot be a map');
  return { lookup: plan, value };
}

/**
 * A composed query expression: `{and: [...]}`, `{or: [...]}`, `{not: expr}`, or a map of lookups
 * to values (all of which must hold).
 */
export function compileCondition(graph: ModelGraph, model: string, expr: unknown): ConditionPlan {
  if (typeof expr !== 'object' || expr === null || Array.isArray(expr)) throw new LookupError('a query expression must be a map');
  const map = expr as Record<string, unknown>;
  const keys = Object.keys(map);
  if (keys.length === 0) throw new LookupError('empty query: give at least one lookup, or and/or/not');
  const combinator = keys.find((k) => k === 'and' || k === 'or' || k === 'not');
  if (combinator && keys.length > 1) throw new LookupError(`"${combinator}" must be the only key of its map`);
  if (combinator === 'not') return { not: compileCondition(graph, model, map.not) };
  if (combinator === 'and' || combinator === 'or') {
    const items = map[combinator];
    if (!Array.isArray(items) || items.length === 0) throw new LookupError(`"${combinator}" needs a non-empty list of queries`);
    const children = items.map((item) => compileCondition(graph, model, item));
    return combinator === 'and' ? { and: children } : { or: children };
  }
  const lookups = keys.map((k) => lookupValue(compileLookup(graph, model, k), k, map[k]));
  return lookups.length === 1 ? lookups[0] : { and: lookups };
}

/* ------------------------------------------------------------- the viewset's filters */

/** A query parameter or filter written `[type, default]` or `{type, default, description}`. */
export function paramSpec(spec: ParamSpec): { type: ParamType; default: unknown; description?: string } {
  if (Array.isArray(spec)) return { type: spec[0], default: spec.length > 1 ? spec[1] : null };
  return { type: spec.type, default: spec.default ?? null, description: spec.description };
}

/** A spec default as the value the parameter validates to (datetimes in UTC ISO form, lists split). */
function normalizeDefault(type: ParamType, shape: FilterParam['shape'], value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (shape) {
    const items = Array.isArray(value)
      ? value
      : String(value)
          .split(',')
          .map((s) => s.trim());
    return items.map((item) => normalizeDefault(type, undefined, item));
  }
  switch (type) {
    case 'int':
    case 'float':
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'bool':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'datetime': {
      const d = new Date(typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : String(value));
      return Number.isNaN(d.getTime()) ? value : d.toISOString();
    }
    case 'decimal':
      return String(value);
    case 'list':
      return Array.isArray(value) ? value.map(String) : String(value).split(',');
    default:
      return value;
  }
}

/** `{views__gte: 100}` → `views__gte=100`, for parameter descriptions. */
export function describeExpr(expr: unknown): string {
  if (typeof expr !== 'object' || expr === null) return JSON.stringify(expr);
  const map = expr as Record<string, unknown>;
  if (Array.isArray(map.and)) return `(${map.and.map(describeExpr).join(' and ')})`;
  if (Array.isArray(map.or)) return `(${map.or.map(describeExpr).join(' or ')})`;
  if ('not' in map) return `not ${describeExpr(map.not)}`;
  const parts = Object.entries(map).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return parts.length === 1 ? parts[0] : `(${parts.join(' and ')})`;
}

/** The operator of `date_compare_attr` (`__gte` → `gte`); absent, an exact match, as in the default behaviours' base mixin. */
function dateCompareOp(attr: string | undefined): LookupOperator {
  return ((attr ?? '').replace(/^__/, '') || 'exact') as LookupOperator;
}

/**
 * The list filters of a viewset, or null when it configures none. Mixins apply in the order
 * `filter_mixins` lists them; `relations_filters` and `filters_match_cases` without their mixin in
 * that list still apply, after the listed ones (the spec asked for them).
 */
export function buildFilters(viewset: ViewsetSpec, model: string, graph: ModelGraph): ResourceFilters | null {
  const queryParams = Object.entries(viewset.query_params ?? {});
  const relations = viewset.relations_filters ?? [];
  const matchCases = viewset.filters_match_cases ?? [];
  const listed: MixinName[] = viewset.filter_mixins ?? [];
  if (!queryParams.length && !relations.length && !matchCases.length && !listed.length && !viewset.query_params_handler) return null;

  const params: FilterParam[] = [];
  for (const [name, spec] of queryParams) {
    const p = paramSpec(spec);
    params.push({
      name,
      type: p.type,
      default: normalizeDefault(p.type, undefined, p.default),
      description: p.description,
      from: 'query_params',
    });
  }
  const relationLookups = relations.map((rf) => {
    const lookup = compileLookup(graph, model, rf.query_filter);
    const p = paramSpec(rf.filter_type);
    // `isnull` takes a bool whatever the declared type; `in` and `range` take several values.
    const type: ParamType = lookup.op === 'isnull' ? 'bool' : p.type;
    // A list's `contains` and `overlap` take several values too, as `in` does.
    const shape =
      lookup.op === 'in' || lookup.op === 'range' ? lookup.op : lookup.kind === 'list' && lookup.op !== 'isnull' ? 'in' : undefined;
    params.push({
      name: rf.query_param,
      type,
      shape,
      default: normalizeDefault(type, shape, p.default),
      description: p.description ?? `Lookup ${rf.query_filter}.`,
      from: 'relations_filters',
    });
    return { param: rf.query_param, lookup, source: rf.query_filter };
  });
  const cases = matchCases.map((mc) => {
    const side = (key: 'true' | 'false'): CasePlan => {
      const c = mc.cases[key];
      return { condition: compileCondition(graph, model, c.query_filter), include: c.include !== false, source: c.query_filter };
    };
    const t = side('true');
    const f = side('false');
    const words = (c: CasePlan) => `${c.include ? '' : 'exclude '}${describeExpr(c.source)}`;
    params.push({
      name: mc.query_param,
      type: 'bool',
      default: null,
      description: `true: ${words(t)}; false: ${words(f)}.`,
      from: 'filters_match_cases',
    });
    return { param: mc.query_param, true: t, false: f };
  });

  const order: MixinName[] = [...listed];
  if (relations.length && !order.includes('RelationFilterViewSetMixin')) order.push('RelationFilterViewSetMixin');
  if (matchCases.length && !order.includes('MatchCaseFilterViewSetMixin')) order.push('MatchCaseFilterViewSetMixin');

  const mixins: MixinPlan[] = order.map((name): MixinPlan => {
    if (name === 'MatchCaseFilterViewSetMixin') return { name, kind: 'cases', cases };
    if (name === 'RelationFilterViewSetMixin') return { name, kind: 'lookups', accepts: 'any', lookups: relationLookups };
    const rule = TYPE_MIXINS[name];
    const op = name === 'DateFilterViewSetMixin' ? dateCompareOp(viewset.date_compare_attr) : rule.op;
    const lookups = params
      .filter((p) => p.from === 'query_params' && (rule.types as readonly string[]).includes(p.type))
      .flatMap((p) => {
        const source = op === 'exact' ? p.name : `${p.name}__${op}`;
        // A parameter that names no field is left to the query_params_handler.
        if (!hasField(graph(model), p.name)) return [];
        return [{ param: p.name, lookup: compileLookup(graph, model, source), source }];
      });
    return { name, kind: 'lookups', accepts: rule.accepts, lookups };
  });

  // An integer compared with a 32-bit column must fit it, as a path or body value must: the
  // same 422 on both databases instead of a comparison with a value no row can hold.
  for (const p of params) {
    if (p.type !== 'int') continue;
    const kinds = mixins.flatMap((m) => (m.kind === 'lookups' ? m.lookups.filter((l) => l.param === p.name).map((l) => l.lookup) : []));
    if (kinds.some((l) => (l.kind === 'int' || l.items === 'integer') && l.op !== 'isnull')) p.bounds = 'int32';
  }

  // Document what each query_params entry does.
  for (const p of params) {
    if (p.from !== 'query_params' || p.description !== undefined) continue;
    const uses = mixins.flatMap((m) => (m.kind === 'lookups' ? m.lookups.filter((l) => l.param === p.name).map((l) => l.source) : []));
    if (uses.length) p.description = `Lookup ${uses.join(', ')}.`;
  }
  return { params, mixins, handler: viewset.query_params_handler };
}
