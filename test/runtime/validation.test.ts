/**
 * The NUL-character rule of `parseRequest` and `validateData` on schema shapes the HTTP suites do not
 * reach: nested objects and arrays, records, unions, loose and strict objects, defaults, deep JSON.
 */
import { fieldsParam, fromString, intFromString, RequestValidationError, ValidationError, z } from '../../runtime';
import { parseRequest, validateData } from '../../runtime/validation/validate';

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
    expect(entries(() => parseRequest(schema, { a: { b: ['ok', 'n\u0000'] } }, 'body'))).toEqual([
      { ...NUL_ENTRY, loc: ['body', 'data', 'a', 'b', 1] },
    ]);
    expect(parseRequest(schema, { a: { b: ['ok'] } }, 'body')).toEqual({ a: { b: ['ok'] }, c: 'x' });
  });

  it('records, unions and loose objects keep every string, so every string is looked at', () => {
    const record = z.object({ r: z.record(z.string(), z.string()) });
    expect(entries(() => parseRequest(record, { r: { k: 'v\u0000' } }, 'query'))).toEqual([{ ...NUL_ENTRY, loc: ['query', 'r', 'k'] }]);
    const union = z.object({ u: z.union([z.number(), z.string()]) });
    expect(entries(() => parseRequest(union, { u: '\u0000' }, 'body'))).toEqual([{ ...NUL_ENTRY, loc: ['body', 'data', 'u'] }]);
    const loose = z.looseObject({ a: z.string() });
    expect(entries(() => parseRequest(loose, { a: 'ok', extra: 'e\u0000' }, 'body'))).toEqual([
      { ...NUL_ENTRY, loc: ['body', 'data', 'extra'] },
    ]);
  });

  it("a strict object's unknown keys are one entry each, at the key, through lists of strict items too", () => {
    const item = z.strictObject({ text: z.string() });
    const strict = z.strictObject({ title: z.string(), lines: z.array(item) });
    const extra = (...loc: (string | number)[]) => ({
      type: 'extra_forbidden',
      loc: ['body', 'data', ...loc],
      msg: 'Extra inputs are not permitted',
    });
    expect(
      entries(() => parseRequest(strict, { title: 'x', titel: 'y', lines: [{ text: 'a' }, { text: 'b', txt: 'c' }], more: 1 }, 'body')),
    ).toEqual([extra('lines', 1, 'txt'), extra('titel'), extra('more')]);
  });

  it('a strict object reports the unknown key, not its NUL', () => {
    const strict = z.strictObject({ a: z.string() });
    expect(entries(() => parseRequest(strict, { a: 'ok', extra: '\u0000' }, 'body'))).toEqual([
      { type: 'extra_forbidden', loc: ['body', 'data', 'extra'], msg: 'Extra inputs are not permitted' },
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

  it('validateData(), for custom code, applies the same rule with the 400 body', () => {
    const schema = z.object({ name: z.string() });
    expect(() => validateData(schema, { name: 'a\u0000' })).toThrow(ValidationError);
    expect(entries(() => validateData(schema, { name: 'a\u0000' }))).toEqual([{ ...NUL_ENTRY, loc: ['name'] }]);
    expect(validateData(schema, { name: 'a' })).toEqual({ name: 'a' });
  });
});

describe('NUL characters in many strings', () => {
  it('reports the first 100', () => {
    const schema = z.object({ list: z.array(z.string()) });
    const found = entries(() => parseRequest(schema, { list: Array.from({ length: 50_000 }, () => '\u0000') }, 'body')) as {
      loc: unknown[];
    }[];
    expect(found).toHaveLength(100);
    expect(found[99].loc).toEqual(['body', 'data', 'list', 99]);
  });
});

/**
 * Fast parsers answer common valid inputs without running the schema; they must give exactly what
 * the schema gives. Each input is parsed by a schema with a fast parser and by the same schema
 * built without one: same output, or the same 422 entries.
 */
describe('fast parsers', () => {
  const outcome = (fn: () => unknown) => {
    try {
      return { data: fn() };
    } catch (err) {
      if (err instanceof RequestValidationError) return { entries: err.entries };
      throw err;
    }
  };
  const INPUTS = [
    '0',
    '7',
    '1234',
    '-5',
    '-0',
    '2147483647',
    '2147483648',
    '-2147483648',
    '-2147483649',
    '+5',
    ' 5',
    '5 ',
    '05',
    '007',
    '1e3',
    '0x10',
    '1.0',
    '',
    ' ',
    '-',
    '12345678901234567',
    '999999999999999',
    'abc',
    '\u0663',
    '1\u0000',
  ];

  it.each([
    ['a 32-bit key', -2147483648, 2147483647],
    ['a small range', 1, 10],
    ['a 53-bit key', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  ])('intFromString (%s): the schema’s own answer for every input', (_name, min, max) => {
    const fast = z.object({ pk: intFromString(min, max) });
    const plain = z.object({ pk: fromString.int().pipe(z.int().min(min).max(max)) });
    for (const pk of INPUTS) {
      expect([pk, outcome(() => parseRequest(fast, { pk }, 'path'))]).toEqual([pk, outcome(() => parseRequest(plain, { pk }, 'path'))]);
    }
    for (const value of [{}, { pk: 5 }, { pk: ['5'] }, { pk: '5', other: 'x' }, { pk: '5', 'o\u0000': 'x' }, null, []]) {
      expect(outcome(() => parseRequest(fast, value, 'path'))).toEqual(outcome(() => parseRequest(plain, value, 'path')));
    }
  });

  it('a plain key in range is not run through the schema', () => {
    const pk = intFromString(1, 100);
    const schema = z.object({ pk });
    const run = jest.spyOn(schema, 'safeParse');
    expect(parseRequest(schema, { pk: '42' }, 'path')).toEqual({ pk: 42 });
    expect(run).not.toHaveBeenCalled();
    expect(outcome(() => parseRequest(schema, { pk: '420' }, 'path'))).toEqual({
      entries: [{ type: 'less_than_equal', loc: ['path', 'pk'], msg: 'Input should be less than or equal to 100' }],
    });
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('an object whose fields are all optional: absent fields stay absent, unknown keys are dropped, as the schema does', () => {
    const fast = z.object({ fields: fieldsParam(['id', 'title']), pk: intFromString(1, 100).optional() });
    const plain = z.object({ fields: fieldsParam(['id', 'title']), pk: fromString.int().pipe(z.int().min(1).max(100)).optional() });
    for (const value of [
      {},
      { other: '1' },
      { fields: 'title' },
      { fields: 'nope' },
      { pk: '5' },
      { pk: '500' },
      { fields: undefined },
      Object.create({ fields: 'id' }),
    ]) {
      expect(outcome(() => parseRequest(fast, value, 'query'))).toEqual(outcome(() => parseRequest(plain, value, 'query')));
    }
    const run = jest.spyOn(fast, 'safeParse');
    expect(parseRequest(fast, {}, 'query')).toEqual({});
    expect(run).not.toHaveBeenCalled();
  });
});
