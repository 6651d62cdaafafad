/**
 * The list's filter parameters (`query_params`, `relations_filters`, `filters_match_cases`): each
 * name once, none taking a parameter the list reads itself, and each `query_params` entry applied
 * by a listed filter mixin (or left to a query_params_handler).
 */
import type { YamlPath } from '../../load/load';
import { FILTER_MIXINS } from '@svcgen/runtime/catalogue';
import { TYPE_MIXINS } from '../filter-mixins';
import type { TypeFilterMixin } from '@svcgen/runtime/catalogue';
import { didYouMean } from '../suggest';
import { asRec, asStr, type Ctx, eachEntry, eachItem, type Rec, report } from './context';
import type { Resource } from './resources';

/** Parameters the list endpoint reads itself (pagination, including CursorPagination's `cursor`, and ordering; `search` too, with search_fields). */
const LIST_PARAMETERS = ['page', 'page_size', 'limit', 'offset', 'cursor', 'ordering'];

export function checkQueryParams(ctx: Ctx, res: Resource, vs: Rec): void {
  const seen = new Map<string, string>();
  const clashing = new Set<string>(LIST_PARAMETERS);
  const claim = (name: unknown, where: string, at: YamlPath, key = false) => {
    if (typeof name !== 'string') return;
    if (LIST_PARAMETERS.includes(name) || (name === 'search' && Array.isArray(vs.search_fields))) {
      report(ctx, res.spec, at, `query parameter "${name}" clashes with the list endpoint's own "${name}": rename it`, key);
    } else if (seen.has(name)) {
      clashing.add(name);
      report(ctx, res.spec, at, `duplicate query parameter "${name}": already defined in ${seen.get(name)}`, key);
    } else seen.set(name, where);
  };
  eachEntry(vs.query_params, ['viewset', 'query_params'], (name, _value, at) => claim(name, 'query_params', at, true));
  eachItem(vs.relations_filters, ['viewset', 'relations_filters'], (rf, at) => {
    claim(asRec(rf)?.query_param, 'relations_filters', [...at, 'query_param']);
  });
  eachItem(vs.filters_match_cases, ['viewset', 'filters_match_cases'], (mc, at) => {
    claim(asRec(mc)?.query_param, 'filters_match_cases', [...at, 'query_param']);
  });
  // A parameter already reported (a clash, a duplicate) is not reported again as unused.
  if (vs.query_params_handler === undefined) checkQueryParamsApplied(ctx, res, vs, clashing);
}

/**
 * Without a query_params_handler, a `query_params` entry filters only through a type mixin, which
 * looks up the field of the parameter's name: one that names no field, or whose type no listed mixin
 * takes, would be validated and then ignored.
 */
function checkQueryParamsApplied(ctx: Ctx, res: Resource, vs: Rec, reported: ReadonlySet<string>): void {
  const mixins: unknown[] = Array.isArray(vs.filter_mixins) ? vs.filter_mixins : [];
  // A misspelt mixin is reported as such; what it would have applied is not a second problem.
  if (mixins.some((m) => typeof m !== 'string' || !(FILTER_MIXINS as readonly string[]).includes(m))) return;
  const listed = mixins.filter((m): m is TypeFilterMixin => typeof m === 'string' && m in TYPE_MIXINS);
  eachEntry(vs.query_params, ['viewset', 'query_params'], (name, value, at) => {
    const type = paramTypeOf(value);
    // An entry the meta-schema rejected is reported as such.
    if (type === undefined || reported.has(name)) return;
    if (!res.fields.has(name)) {
      const hint = didYouMean(name, res.fields.keys()) || '';
      report(
        ctx,
        res.spec,
        at,
        `query parameter "${name}" names no field of ${res.name}${hint}, so no filter mixin applies it: name it after a field, or apply it in a query_params_handler`,
        true,
      );
    } else if (res.fields.get(name)?.type === 'list') {
      const example = `{query_param: ${name}__contains, query_filter: ${name}__contains, filter_type: [${type}, null]}`;
      report(
        ctx,
        res.spec,
        at,
        `query parameter "${name}" names list field "${name}", which no type mixin compares: filter it in relations_filters with contains or overlap (${example}), or apply it in a query_params_handler`,
        true,
      );
    } else if (!listed.some((m) => (TYPE_MIXINS[m].types as readonly string[]).includes(type))) {
      const takers = (Object.keys(TYPE_MIXINS) as TypeFilterMixin[]).filter((m) =>
        (TYPE_MIXINS[m].types as readonly string[]).includes(type),
      );
      const add = takers.length
        ? `add ${takers.length === 1 ? takers[0] : `one of ${takers.join(', ')}`} to filter_mixins`
        : 'no filter mixin takes it';
      report(
        ctx,
        res.spec,
        at,
        `query parameter "${name}" (${type}) is applied by none of the listed filter_mixins: ${add}, or apply it in a query_params_handler`,
        true,
      );
    }
  });
}

/** The type of a filter parameter written `type`, `[type, default]` or `{type, default, description}`. */
function paramTypeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return asStr(value[0]);
  return asStr(asRec(value)?.type);
}
