/**
 * Code fragments of a resource's filters module (`resources/<name>/filters.ts`): the filter query
 * parameters as Zod schemas, and the mixins with their lookup plans as data.
 */
import type { FilterParam, MixinPlan, ResourceFilters } from '../model/filter-plans';
import type { Resource } from '../model/model';
import { docLine, literal, str } from '../model/names';
import { header, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';

/** Any JSON value as a TypeScript literal, broken over lines when it would be long. */
function pretty(value: unknown, indent = 0): string {
  const flat = literal(value);
  if (flat.length + indent <= 100 || value === null || typeof value !== 'object') return flat;
  const pad = ' '.repeat(indent + 2);
  if (Array.isArray(value)) return `[\n${value.map((v) => `${pad}${pretty(v, indent + 2)},`).join('\n')}\n${' '.repeat(indent)}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const key = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : str(k));
  return `{\n${entries.map(([k, v]) => `${pad}${key(k)}: ${pretty(v, indent + 2)},`).join('\n')}\n${' '.repeat(indent)}}`;
}

/** A plan without `undefined` members, so that `literal` can print it. */
function data(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/**
 * The Zod schema of one filter query parameter: `queryParam(type[, shape])`, or
 * `queryParam('int', INT32)` for an integer bounded by its 32-bit column, then its default
 * (a `null` default: optional, not applied) and its description. Reusable by any generated
 * query schema (the list's, a relation's GET). With `imports`, records the runtime import of `queryParam`.
 */
export function filterParamZod(p: Pick<FilterParam, 'type' | 'shape' | 'bounds' | 'default' | 'description'>, imports?: Imports): string {
  const absent = p.default === null || p.default === undefined;
  const runtime = (name: string) => (imports ? imports.runtime(name) : name);
  const bounds = p.bounds && runtime('INT32');
  const options = bounds ? (p.shape ? `{ shape: ${str(p.shape)}, ...${bounds} }` : bounds) : p.shape && str(p.shape);
  let expr = `${runtime('queryParam')}(${str(p.type)}${options ? `, ${options}` : ''})`;
  expr += absent ? '.optional()' : `.default(${literal(p.default)})`;
  const description = [p.description, p.shape ? SHAPE_WORDS[p.shape] : undefined].filter(Boolean).join(' ');
  const meta: string[] = [];
  if (description) meta.push(`description: ${str(docLine(description))}`);
  // Documented as the query string carries it (a list as its comma-separated text).
  if (!absent) meta.push(`default: ${literal(Array.isArray(p.default) ? p.default.join(',') : p.default)}`);
  return meta.length ? `${expr}.meta({ ${meta.join(', ')} })` : expr;
}

const SHAPE_WORDS = { in: 'Several values, separated by commas.', range: 'Two values, low and high, separated by a comma.' } as const;

const MIXIN_DOCS: Record<MixinPlan['name'], string> = {
  IcontainsFilterViewSetMixin: '`<field>__icontains` for each string value',
  BooleanFilterViewSetMixin: 'an exact match for each bool value',
  NumericFilterViewSetMixin: 'an exact match for each int or float value',
  DateFilterViewSetMixin: '`<field><date_compare_attr>` for each date or datetime value',
  GreaterDateFilterViewSetMixin: '`<field>__gt` for each date or datetime value',
  LessDateFilterViewSetMixin: '`<field>__lt` for each date or datetime value',
  GreaterEqualDateFilterViewSetMixin: '`<field>__gte` for each date or datetime value',
  LessEqualDateFilterViewSetMixin: '`<field>__lte` for each date or datetime value',
  RelationFilterViewSetMixin: 'the query_filter lookup of each relations_filters value',
  MatchCaseFilterViewSetMixin: 'the `true` case of each filters_match_cases value that is true, its `false` case when false',
};

function mixinCode(m: MixinPlan, imports: Imports): string {
  if (m.kind === 'cases') {
    const cases = Object.fromEntries(
      m.cases.map((c) => [
        c.param,
        // One condition that a true value applies one way and a false value the other: written once.
        c.true.include !== c.false.include && JSON.stringify(data(c.true.condition)) === JSON.stringify(data(c.false.condition))
          ? { condition: c.true.condition, include: c.true.include }
          : {
              true: { condition: c.true.condition, include: c.true.include },
              false: { condition: c.false.condition, include: c.false.include },
            },
      ]),
    );
    return `${imports.runtime('matchCaseMixin')}(${pretty(data(cases), 2)})`;
  }
  const lookups = Object.fromEntries(m.lookups.map((l) => [l.param, l.lookup]));
  return `${imports.runtime('lookupMixin')}(${pretty(data(lookups), 2)}, ${str(m.accepts)})`;
}

export function filtersView(r: Resource, ctx: RenderContext) {
  const f = r.filters as ResourceFilters;
  const imports = new Imports(runtimeFrom(ctx, 2));
  for (const name of ['applyMixins', 'pickFilters', 'z']) imports.runtime(name);
  for (const name of ['HookContext', 'Knex']) imports.runtimeType(name);
  const params = f.params.map((p) => ({ name: p.name, zod: filterParamZod(p, imports) }));
  const mixins = f.mixins.map((m) => ({
    name: m.name,
    doc: docLine(
      `${m.name}: ${MIXIN_DOCS[m.name]}${m.kind === 'lookups' ? ` (${m.lookups.map((l) => l.source).join(', ') || 'no parameter'})` : ` (${m.cases.map((c) => c.param).join(', ')})`}.`,
    ),
    code: mixinCode(m, imports),
  }));
  const sources = [...new Set(f.params.map((p) => p.from))];
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    verboseName: r.verboseName,
    model: r.model,
    sources: sources.length ? sources.join(', ') : 'none',
    params,
    mixins,
    order: f.mixins.length ? f.mixins.map((m) => m.name).join(', ') : 'none',
    handler: f.handler,
    imports: imports.print(),
  };
}
