/**
 * Zod schemas as OpenAPI 3.1 Schema Objects (runtime/http/openapi-schema.ts), each kind on its own,
 * compared as JSON text so that key order counts too. The served documents are pinned as a whole
 * by test/http/openapi-golden.test.ts; these are the rules behind them, including kinds no
 * committed service uses yet.
 */
import { z } from '../../runtime/core/zod';
import { SchemaWriter, type SchemaObject } from '../../runtime/http/openapi-schema';

const json = (value: unknown) => JSON.stringify(value);
const written = (schema: z.ZodType, writer = new SchemaWriter()): string => json(writer.write(schema));

describe('a Zod schema as a Schema Object', () => {
  it.each<[string, z.ZodType, SchemaObject]>([
    ['a string with its lengths', z.string().min(1).max(20), { type: 'string', minLength: 1, maxLength: 20 }],
    [
      'an email, a uuid, a URL, a date and a datetime by their formats',
      z.object({ e: z.email(), u: z.uuid(), l: z.url(), d: z.iso.date(), t: z.iso.datetime() }),
      {
        type: 'object',
        properties: {
          e: { type: 'string', format: 'email' },
          u: { type: 'string', format: 'uuid' },
          l: { type: 'string', format: 'uri' },
          d: { type: 'string', format: 'date' },
          t: { type: 'string', format: 'date-time' },
        },
        required: ['e', 'u', 'l', 'd', 't'],
      },
    ],
    ['an integer with its bounds, in the order of its checks', z.int().max(9).min(1), { type: 'integer', maximum: 9, minimum: 1 }],
    ['a number with exclusive bounds', z.number().gt(0).lt(1), { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }],
    ['a nullable boolean', z.boolean().nullable(), { type: ['boolean', 'null'] }],
    ['a literal with every value', z.literal([1, 2, 3]), { type: 'number', enum: [1, 2, 3] }],
    ['a literal of mixed types', z.literal(['a', 1]), { type: ['string', 'number'], enum: ['a', 1] }],
    ['a nullable enum, with null among its values', z.enum(['a', 'b']).nullable(), { type: ['string', 'null'], enum: ['a', 'b', null] }],
    [
      'an array with its lengths',
      z.array(z.string()).min(1).max(5),
      { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 },
    ],
    [
      'a union, nested unions flattened and null once at the end',
      z.union([z.string().nullable(), z.union([z.number(), z.null()])]),
      {
        anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }],
      },
    ],
    ['a record', z.record(z.string(), z.int()), { type: 'object', additionalProperties: { type: 'integer' } }],
    [
      'a strict object, optional and defaulted keys not required',
      z.strictObject({ a: z.string(), b: z.string().optional(), c: z.int().default(1) }),
      {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'integer', default: 1 } },
        required: ['a'],
        additionalProperties: false,
      },
    ],
    [
      'an object with other keys of any value',
      z.object({ status: z.int() }).catchall(z.unknown()),
      {
        type: 'object',
        properties: { status: { type: 'integer' } },
        required: ['status'],
        additionalProperties: {},
      },
    ],
    ['a pipe by what it accepts', z.string().transform(Number).pipe(z.int()), { type: 'string' }],
    [
      'a transform by the type its metadata gives, with no null added',
      z.string().transform(Number).meta({ type: 'integer' }).nullable(),
      { type: 'integer' },
    ],
    [
      'a default before the metadata the shape has no slot for',
      z.string().max(3).default('x').meta({ description: 'd' }),
      {
        type: 'string',
        maxLength: 3,
        default: 'x',
        description: 'd',
      },
    ],
    [
      'metadata in the slot the shape has for it',
      z.string().meta({ description: 'd', format: 'uri' }).max(9),
      {
        type: 'string',
        maxLength: 9,
        format: 'uri',
        description: 'd',
      },
    ],
    [
      'the outer metadata over the inner',
      z.string().describe('inner').optional().meta({ description: 'outer' }),
      { type: 'string', description: 'outer' },
    ],
  ])('%s', (_name, schema, expected) => {
    expect(written(schema)).toBe(json(expected));
  });

  it('refuses a kind it cannot describe, unless its metadata gives the type', () => {
    const custom = z.custom<string>((v) => typeof v === 'string');
    expect(() => written(custom)).toThrow(
      'OpenAPI: a Zod custom schema cannot be documented by its definition; give it a type with .meta({ type })',
    );
    expect(written(custom.meta({ type: 'string' }))).toBe(json({ type: 'string' }));
  });
});

describe('components', () => {
  it('writes a schema with an id once, where first met, and refers to it everywhere', () => {
    const Tag = z.object({ name: z.string() }).meta({ id: 'Tag' });
    const Article = z
      .object({ title: z.string(), tags: z.array(Tag), first: Tag.optional() })
      .meta({ id: 'Article', example: { title: 't' } });
    const writer = new SchemaWriter();
    expect(written(Article, writer)).toBe(json({ $ref: '#/components/schemas/Article' }));
    expect(written(Tag, writer)).toBe(json({ $ref: '#/components/schemas/Tag' }));
    // The parent claims its place before its content is written: Article comes first.
    expect(json(writer.components)).toBe(
      json({
        Article: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            tags: { type: 'array', items: { $ref: '#/components/schemas/Tag' } },
            first: { $ref: '#/components/schemas/Tag' },
          },
          required: ['title', 'tags'],
          example: { title: 't' },
        },
        Tag: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }),
    );
  });

  it('does not pass an id on to a schema derived from it', () => {
    const Named = z.string().meta({ id: 'Named' });
    const writer = new SchemaWriter();
    expect(
      written(
        Named.refine((s) => s.length > 0),
        writer,
      ),
    ).toBe(json({ type: 'string' }));
    expect(writer.components).toEqual({});
  });
});
