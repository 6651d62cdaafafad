/**
 * The NUL-character rule of `parseRequest` and `validate` on schema shapes the HTTP suites do not
 * reach: nested objects and arrays, records, unions, loose and strict objects, defaults, deep JSON.
 */
import { parseRequest, RequestValidationError, validate, ValidationError, z } from '../../runtime';

const NUL_ENTRY = { type: 'null_characters_not_allowed', msg: 'String should not contain null characters' };

function entries(fn: () => unknown): unknown[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestValidationError || err instanceof ValidationError) return err.entries;
    throw err;
  }
  throw new Error('no validation error');
}

describe('NUL characters in request values', () => {
  it('nested objects and arrays: the exact loc', () => {
    const schema = z.object({ a: z.object({ b: z.array(z.string()) }), c: z.string().default('x') });
    expect(entries(() => parseRequest(schema, { a: { b: ['ok', 'n\u0000'] } }, 'body'))).toEqual([{ ...NUL_ENTRY, loc: ['body', 'data', 'a', 'b', 1] }]);
    expect(parseRequest(schema, { a: { b: ['ok'] } }, 'body')).toEqual({ a: { b: ['ok'] }, c: 'x' });
  });

  it('records, unions and loose objects keep every string, so every string is looked at', () => {
    const record = z.object({ r: z.record(z.string(), z.string()) });
    expect(entries(() => parseRequest(record, { r: { k: 'v\u0000' } }, 'query'))).toEqual([{ ...NUL_ENTRY, loc: ['query', 'r', 'k'] }]);
    const union = z.object({ u: z.union([z.number(), z.string()]) });
    expect(entries(() => parseRequest(union, { u: '\u0000' }, 'body'))).toEqual([{ ...NUL_ENTRY, loc: ['body', 'data', 'u'] }]);
    const loose = z.looseObject({ a: z.string() });
    expect(entries(() => parseRequest(loose, { a: 'ok', extra: 'e\u0000' }, 'body'))).toEqual([{ ...NUL_ENTRY, loc: ['body', 'data', 'extra'] }]);
  });

  it('a strict object reports the unknown key, not its NUL', () => {
    const strict = z.strictObject({ a: z.string() });
    expect(entries(() => parseRequest(strict, { a: 'ok', extra: '\u0000' }, 'body'))).toEqual([
      { type: 'extra_forbidden', loc: ['body', 'data'], msg: 'Extra inputs are not permitted: extra' },
    ]);
  });

  it('deeply nested JSON is walked without recursion', () => {
    let value: unknown = 'deep\u0000';
    for (let i = 0; i < 100_000; i++) value = [value];
    const schema = z.object({ j: z.custom<unknown>(() => true) });
    const found = entries(() => parseRequest(schema, { j: value }, 'body')) as { loc: unknown[] }[];
    expect(found).toHaveLength(1);
    expect(found[0].loc).toHaveLength(3 + 100_000);
  });

  it('validate(), for custom code, applies the same rule with the 400 body', () => {
    const schema = z.object({ name: z.string() });
    expect(() => validate(schema, { name: 'a\u0000' })).toThrow(ValidationError);
    expect(entries(() => validate(schema, { name: 'a\u0000' }))).toEqual([{ ...NUL_ENTRY, loc: ['name'] }]);
    expect(validate(schema, { name: 'a' })).toEqual({ name: 'a' });
  });
});

describe('NUL characters in many strings', () => {
  it('reports the first 100', () => {
    const schema = z.object({ list: z.array(z.string()) });
    const found = entries(() => parseRequest(schema, { list: Array.from({ length: 50_000 }, () => '\u0000') }, 'body')) as { loc: unknown[] }[];
    expect(found).toHaveLength(100);
    expect(found[99].loc).toEqual(['body', 'data', 'list', 99]);
  });
});
