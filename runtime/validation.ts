/**
 * Request validation: Zod issues rendered as the seed's `{type, loc, msg}` entries.
 */
import type { z } from 'zod';
import { INT_TYPE_MESSAGE } from './fields';
import { RequestValidationError, ValidationError, type ValidationEntry } from './errors';

type Issue = z.core.$ZodIssue & { input?: unknown };

const EXPECTED: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['model_attributes_type', 'Input should be a valid dictionary or object to extract fields from'],
  array: ['list_type', 'Input should be a valid list'],
  date: ['date_type', 'Input should be a valid date'],
};

const FORMATS: Record<string, [string, string]> = {
  email: ['value_error', 'value is not a valid email address'],
  url: ['url_parsing', 'Input should be a valid URL'],
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  date: ['date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'],
  datetime: ['datetime_parsing', 'Input should be a valid datetime in ISO 8601 format'],
  regex: ['string_pattern_mismatch', 'String does not match the expected format'],
};

function describe(issue: Issue): [string, string] {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return ['missing', 'Field required'];
      if (issue.message === INT_TYPE_MESSAGE || issue.expected === 'int') return ['int_type', INT_TYPE_MESSAGE];
      return EXPECTED[issue.expected] ?? [`${issue.expected}_type`, `Input should be a valid ${issue.expected}`];
    case 'too_big':
      if (issue.origin === 'string') return ['string_too_long', `String should have at most ${issue.maximum} characters`];
      if (issue.origin === 'array' || issue.origin === 'set') return ['too_long', `List should have at most ${issue.maximum} items`];
      return ['less_than_equal', `Input should be less than or equal to ${issue.maximum}`];
    case 'too_small':
      if (issue.origin === 'string') return ['string_too_short', `String should have at least ${issue.minimum} character${issue.minimum === 1 ? '' : 's'}`];
      if (issue.origin === 'array' || issue.origin === 'set') return ['too_short', `List should have at least ${issue.minimum} items`];
      return ['greater_than_equal', `Input should be greater than or equal to ${issue.minimum}`];
    case 'invalid_format':
      return FORMATS[issue.format] ?? ['value_error', issue.message];
    case 'invalid_value':
      return ['enum', `Input should be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`];
    case 'unrecognized_keys':
      return ['extra_forbidden', `Extra inputs are not permitted: ${issue.keys.join(', ')}`];
    case 'custom': {
      const type = (issue.params as { type?: unknown } | undefined)?.type;
      return [typeof type === 'string' ? type : 'value_error', issue.message];
    }
    case 'invalid_union': {
      // Report the most specific branch: the last one (e.g. the URL after the empty-string literal).
      const branch = issue.errors[issue.errors.length - 1]?.[0];
      return branch ? describe({ ...branch, input: issue.input } as Issue) : ['value_error', issue.message];
    }
    case 'not_multiple_of':
      return ['multiple_of', `Input should be a multiple of ${issue.divisor}`];
    default:
      return ['value_error', issue.message];
  }
}

/** Turns Zod issues into entries whose `loc` starts with `prefix` (e.g. `['body', 'data']`, `['query']`). */
export function toEntries(issues: readonly z.core.$ZodIssue[], prefix: readonly (string | number)[]): ValidationEntry[] {
  return issues.map((issue) => {
    const [type, msg] = describe(issue as Issue);
    return { type, loc: [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], msg };
  });
}

/** Where a request value comes from, and the `loc` prefix of its validation entries. */
export const LOC = {
  body: ['body', 'data'],
  query: ['query'],
  path: ['path'],
} as const;

/**
 * Parses a request value with `schema`, or throws a 422 whose entries' `loc` starts with the source.
 * Schemas are built once at module load; this only runs them.
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, source: keyof typeof LOC): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new RequestValidationError(toEntries(result.error.issues, LOC[source]));
}

/**
 * For custom code: validates `value` and throws the seed's 400 "Validation Error" body when it does not match.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new ValidationError(toEntries(result.error.issues, []));
}
