/**
 * Lookups (`author__username__iexact`) in relations_filters and match cases: each walks relations
 * to a field of a known resource and ends with at most one known operator, whose value fits it;
 * match-case queries combine lookups with one and/or/not per map.
 */
import type { YamlPath } from '../../load/load';
import { isLookupOperator, LOOKUP_OPERATORS } from '@svcgen/runtime/catalogue';
import { didYouMean } from '../suggest';
import { asRec, asStr, type Ctx, eachEntry, eachItem, INVALID, isRec, type Rec, report } from './context';
import { RELATION_TYPES, relationTarget, type Resource } from './resources';

export function checkLookups(ctx: Ctx, res: Resource, vs: Rec): void {
  eachItem(vs.relations_filters, ['viewset', 'relations_filters'], (rf, at) => {
    const lookup = asStr(asRec(rf)?.query_filter);
    if (lookup !== undefined) checkLookup(ctx, res, lookup, [...at, 'query_filter'], false);
  });
  eachItem(vs.filters_match_cases, ['viewset', 'filters_match_cases'], (mc, at) => {
    eachEntry(asRec(mc)?.cases, [...at, 'cases'], (_name, condition, caseAt) => {
      const expr = asRec(condition)?.query_filter;
      if (expr !== undefined && expr !== INVALID) checkQueryExpr(ctx, res, expr, [...caseAt, 'query_filter']);
    });
  });
}

/** `{and: [...]}`, `{or: [...]}`, `{not: {...}}` or a map of lookups to values. */
function checkQueryExpr(ctx: Ctx, res: Resource, expr: unknown, at: YamlPath): void {
  if (!isRec(expr)) return;
  const keys = Object.keys(expr);
  if (keys.length === 0) {
    report(ctx, res.spec, at, 'empty query: give at least one lookup, or and/or/not');
    return;
  }
  const combinator = keys.find((k) => k === 'and' || k === 'or' || k === 'not');
  if (combinator && keys.length > 1) {
    const message = `"${combinator}" must be the only key of its map: wrap the other lookups in it`;
    report(ctx, res.spec, [...at, combinator], message, true);
    return;
  }
  if (combinator === 'not') return checkQueryExpr(ctx, res, expr.not, [...at, 'not']);
  if (combinator) {
    if (!Array.isArray(expr[combinator]) || !expr[combinator].length) {
      report(ctx, res.spec, [...at, combinator], `"${combinator}" needs a non-empty list of queries`);
    }
    return eachItem(expr[combinator], [...at, combinator], (item, itemAt) => checkQueryExpr(ctx, res, item, itemAt));
  }
  for (const lookup of keys.filter((k) => expr[k] !== INVALID)) {
    const operator = checkLookup(ctx, res, lookup, [...at, lookup], true);
    if (operator) checkLookupValue(ctx, res, operator, expr[lookup], [...at, lookup]);
  }
}

/**
 * Walks `field(__field)*(__operator)?` from `res`: each segment before the last field must be a
 * relation, whose target the walk moves to. Returns the operator, if any, when the lookup is valid.
 */
function checkLookup(ctx: Ctx, res: Resource, lookup: string, at: YamlPath, key: boolean): string | undefined {
  const segments = lookup.split('__');
  const fail = (message: string, note = '') => void report(ctx, res.spec, at, `${message} in lookup "${lookup}"${note}`, key);
  const chain = [res.name];
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const rest = segments.slice(i + 1);
    const field = current.fields.get(seg);
    if (!field && i > 0 && isLookupOperator(seg)) {
      return rest.length ? fail(`nothing may follow the operator "${seg}"`) : seg;
    }
    if (!field) {
      return fail(`unknown field "${seg}"`, ` (${chain.join(' → ')})${didYouMean(seg, current.fields.keys())}`);
    }
    if (!rest.length) {
      if (field.type === 'list') fail(`list field "${seg}" needs an operator: ${LIST_OPERATORS.join(', ')}`);
      return undefined;
    }
    if (!RELATION_TYPES.includes(field.type ?? '')) {
      if (rest.length === 1 && isLookupOperator(rest[0])) return operatorFits(seg, field.type, rest[0], fail);
      if (isLookupOperator(rest[0])) return fail(`nothing may follow the operator "${rest[0]}"`);
      const operators = LOOKUP_OPERATORS.join(', ');
      const hint = didYouMean(rest[0], LOOKUP_OPERATORS) || ` ("${seg}" is a ${field.type} field, not a relation; operators: ${operators})`;
      return fail(`unknown operator "${rest[0]}"`, hint);
    }
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return undefined;
    current = target;
    chain.push(target.name);
  }
  return undefined;
}

/** The operators a `list` field takes: every given value among its items, any of them, or no list at all. */
const LIST_OPERATORS = ['contains', 'overlap', 'isnull'];

/** `operator` when it applies to a field of `type`: a list field takes LIST_OPERATORS, and only a list field takes `overlap`. */
function operatorFits(name: string, type: string | undefined, operator: string, fail: (message: string) => void): string | undefined {
  if (type === 'list' && !LIST_OPERATORS.includes(operator)) {
    fail(`operator "${operator}" does not apply to list field "${name}" (operators: ${LIST_OPERATORS.join(', ')})`);
    return undefined;
  }
  if (type !== 'list' && operator === 'overlap') {
    fail(`operator "overlap" only applies to list fields, and "${name}" is a ${type} field`);
    return undefined;
  }
  return operator;
}

function checkLookupValue(ctx: Ctx, res: Resource, operator: string, value: unknown, at: YamlPath): void {
  if (operator === 'isnull' && typeof value !== 'boolean') report(ctx, res.spec, at, '"isnull" takes true or false');
  if (operator === 'in' && !Array.isArray(value)) report(ctx, res.spec, at, '"in" takes a list of values');
  if (operator === 'range' && !(Array.isArray(value) && value.length === 2)) {
    report(ctx, res.spec, at, '"range" takes a list of two values [low, high]');
  }
}
