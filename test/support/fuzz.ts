/**
 * A seeded, bounded fuzzer driven by a service's OpenAPI document, on fast-check: for every
 * operation, the property "no request of this operation is answered with a 5xx or hangs", checked
 * over requests drawn from an arbitrary built from the operation's schemas. It sends
 * requests whose path parameters, query parameters and body fields hold hostile values (wrong
 * types, numbers past every integer width, NaN strings, empty and very long strings, NUL, lone
 * surrogates, unicode, SQL-ish text, LIKE wildcards, arrays and objects where scalars go, dates
 * outside any calendar a database stores, malformed and non-UTF-8 bodies, long multi-term values:
 * searches of many words, long comma-separated lists and orderings), with and without a bearer
 * token. The same seed sends the same requests in the same order; a failure names the seed and the
 * counterexample path that replay it (fast-check's `seed` and `path` parameters).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';

type Schema = Record<string, any>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface OpenApiOperation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Strings no parameter should turn into a 500. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000',
  'a\u0000b',
  '\ud800',
  'caf\u00e9 \u65e5\u672c \ud83c\udf89',
  "' OR 1=1 --",
  "'; DROP TABLE articles; --",
  '%',
  '_',
  '%_\\',
  '\\',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'undefined',
  'true',
  '0',
  '-0',
  '-1',
  '1.5',
  '1e3',
  '1e309',
  '0x10',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999999999',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '10000-01-01',
  '-000001-01-01',
  '+275760-09-13',
  '2024-02-30',
  '2024-13-01',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '10000-01-01T00:00:00Z',
  '2024-01-01T25:00:00Z',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'a,b,,c',
  '-',
  '-title',
  'title,-views,id',
];

/** The values the sweep sends to every query parameter, one at a time: the edges of every column type. */
export const SWEEP_STRINGS: readonly string[] = [
  '',
  '\u0000',
  '%_\\',
  "' OR 1=1 --",
  'NaN',
  '1.5',
  '1e309',
  '2147483648',
  '-2147483649',
  '9223372036854775808',
  '0000-01-01',
  '10000-01-01',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-01:00',
  '2024-02-30',
  'a,b,,c',
  '-',
];

/** `count` copies of the values, cycled, joined by `sep`. */
function repeated(values: readonly string[], count: number, sep: string): string {
  return Array.from({ length: count }, (_, i) => values[i % values.length]).join(sep);
}

/**
 * Long multi-term values for one query parameter, at and past the caps on what becomes the size of
 * a query (32 words of a search, 1000 values of a list, 16 ordering terms) and far past them within
 * the 8 KB request target: many words, long comma-separated lists of numbers and words, and for an
 * ordering (its description lists its fields) long lists of its own fields, some descending.
 */
export function multiTermValues(p: { description?: string; schema?: Schema }): string[] {
  const values = [
    ...[32, 33, 996, 1500].map((n) => repeated(['a'], n, ' ')),
    repeated(['%', '_', 'x'], 996, ' '),
    ...[1000, 1001].map((n) =>
      repeated(
        Array.from({ length: n }, (_, i) => String(i + 1)),
        n,
        ',',
      ),
    ),
    repeated(['a'], 2000, ','),
  ];
  const description = p.description ?? p.schema?.description;
  const fields = typeof description === 'string' ? /^Order by ([^;]+);/.exec(description)?.[1].split(', ') : undefined;
  if (fields?.length) {
    const terms = fields.flatMap((f) => [f, `-${f}`]);
    values.push(...[16, 17, 1000].map((n) => repeated(terms, n, ',')));
  }
  return values;
}

/** JSON values no body field should turn into a 500. */
export const HOSTILE_JSON: readonly unknown[] = [
  ...HOSTILE_STRINGS,
  0,
  -1,
  1.5,
  -0.5,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 63,
  -(2 ** 63),
  1e308,
  -1e308,
  5e-324,
  true,
  false,
  null,
  [],
  [1, 2],
  ['a'],
  [null],
  [[1]],
  {},
  { a: 1 },
  { __proto__: { polluted: true } },
  Array.from({ length: 2000 }, (_, i) => i),
];

/** Whole bodies that are not what any operation expects. */
const HOSTILE_BODIES: readonly { raw: string | Buffer; type: string }[] = [
  { raw: '{"title": ', type: 'application/json' },
  { raw: '{', type: 'application/json' },
  { raw: 'not json', type: 'application/json' },
  { raw: '"a string"', type: 'application/json' },
  { raw: '42', type: 'application/json' },
  { raw: 'null', type: 'application/json' },
  { raw: '[]', type: 'application/json' },
  { raw: '[{}]', type: 'application/json' },
  { raw: '{"a": 1, "a": 2}', type: 'application/json' },
  { raw: '{"add": [1e999]}', type: 'application/json' },
  { raw: '{"x": "\\ud800"}', type: 'application/json' },
  { raw: '{"x": "\\u0000"}', type: 'application/json' },
  { raw: '{"x": "\\uZZZZ"}', type: 'application/json' },
  { raw: Buffer.from([0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x80, 0x22, 0x7d]), type: 'application/json' },
  { raw: Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), type: 'application/json' },
  { raw: `{"deep": ${'['.repeat(5000)}${']'.repeat(5000)}}`, type: 'application/json' },
  { raw: '{"title": "x"}', type: 'text/plain' },
  { raw: 'title=x', type: 'application/x-www-form-urlencoded' },
  { raw: '{"title": "x"}', type: 'application/json; charset=latin1' },
];

/** Path segments for a `{pk}` that no route should turn into a 500 (already URL-encoded). */
const RAW_PATH_VALUES: readonly string[] = ['%E0%A4%A', '%', '%00', '%2F', '..', '%2e%2e', '%ZZ', '%C0%AF'];

export interface FuzzAuth {
  name: string;
  /** The `Authorization` header, or undefined for none. */
  header: string | undefined;
}

export interface FuzzOptions {
  seed: number;
  /** Requests sent per operation of the document. */
  perOperation: number;
  /** Per-request timeout in milliseconds: a request that takes longer is a hang. */
  timeoutMs: number;
  auths: readonly FuzzAuth[];
  /** Existing primary keys per route base (`articles` → [1, 2]), so valid paths reach the handlers. */
  keys: Record<string, readonly number[]>;
  /** Server path prefix of the document's paths, e.g. '' when they already start with `/api`. */
  prefix?: string;
  /** The `Authorization` the sweep of query parameters sends (the widest view of the data). */
  sweepAuth?: FuzzAuth;
}

export interface FuzzFailure {
  request: string;
  status: number | 'timeout' | 'error';
  body: string;
}

export interface FuzzReport {
  requests: number;
  statuses: Record<string, number>;
  failures: FuzzFailure[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Percent-encodes a string; a lone surrogate becomes the bytes of its invalid UTF-8 form (`%ED%A0%80`). */
function encode(text: string): string {
  return text
    .split(/([\ud800-\udfff])/)
    .map((part) => (part.length === 1 && /[\ud800-\udfff]/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

/** `arbitrary` with the probability `p` (0 to 1), else `otherwise`. */
function chance<T, U>(p: number, arbitrary: fc.Arbitrary<T>, otherwise: fc.Arbitrary<U>): fc.Arbitrary<T | U> {
  const weight = Math.round(p * 1000);
  return fc.oneof({ weight, arbitrary }, { weight: 1000 - weight, arbitrary: otherwise });
}

/** `arbitrary`'s value with the probability `p`, else nothing. */
const maybe = <T>(p: number, arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => chance(p, arbitrary, fc.constant(undefined));

/** One request of the fuzzer, before it is sent. */
interface FuzzRequest {
  method: (typeof METHODS)[number];
  url: string;
  auth: FuzzAuth;
  body: Body;
}

type Body = { json?: unknown; raw?: { raw: string | Buffer; type: string } } | undefined;

class Fuzzer {
  constructor(
    private readonly doc: OpenApiDocument,
    private readonly options: FuzzOptions,
  ) {}

  resolve(schema: Schema | undefined, depth = 0): Schema {
    let s = schema ?? {};
    for (let i = 0; i < 8 && typeof s.$ref === 'string'; i++) {
      s = this.doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')] ?? {};
    }
    if (depth < 4 && Array.isArray(s.allOf) && s.allOf.length > 0) {
      return Object.assign({}, ...s.allOf.map((part: Schema) => this.resolve(part, depth + 1)));
    }
    return s;
  }

  /** Values the schema accepts, more or less: a nearby valid value gets past the first checks. */
  plausible(schema: Schema | undefined, base: string | undefined, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const variants = s.anyOf ?? s.oneOf;
    if (Array.isArray(variants) && variants.length > 0) return fc.oneof(...variants.map((v: Schema) => this.plausible(v, base, depth + 1)));
    if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
    const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
    switch (type) {
      case 'integer': {
        const min = typeof s.minimum === 'number' ? s.minimum : -5;
        const max = typeof s.maximum === 'number' ? s.maximum : 5;
        const [lo, hi] = [Math.max(min, -5), Math.min(max, 5)];
        const near = lo <= hi ? chance(0.3, fc.constantFrom(min, max), fc.integer({ min: lo, max: hi })) : fc.constantFrom(min, max);
        const keys = base ? this.options.keys[base] : undefined;
        return keys && keys.length > 0 ? chance(0.7, fc.constantFrom(...keys), near) : near;
      }
      case 'number':
        return fc.constantFrom(0, 1.25, -3, 100);
      case 'boolean':
        return fc.boolean();
      case 'array':
        if (depth > 3) return fc.constant([]);
        return fc.array(this.plausible(s.items, base, depth + 1), { maxLength: 3 });
      case 'object': {
        if (depth > 3) return fc.constant({});
        const fields = Object.entries<Schema>(s.properties ?? {}).map(([key, field]) => {
          const value = this.plausible(field, key, depth + 1).map((v) => [key, v] as const);
          return (s.required ?? []).includes(key) ? value : maybe(0.6, value);
        });
        return fc.tuple(...fields).map((entries) => {
          const out: Record<string, unknown> = {};
          for (const entry of entries) if (entry) out[entry[0]] = entry[1];
          return out;
        });
      }
      default: {
        if (s.format === 'email') return fc.integer({ min: 0, max: 999 }).map((n) => `f${n}@example.com`);
        if (s.format === 'date-time') return fc.constantFrom('2024-05-06T07:08:09Z', '2024-05-06T07:08:09.123+02:00');
        if (s.format === 'date') return fc.constant('2024-05-06');
        if (s.format === 'uri') return fc.constant('https://example.com/a');
        if (s.format === 'uuid') return fc.constant('123e4567-e89b-12d3-a456-426614174000');
        const max = typeof s.maxLength === 'number' ? s.maxLength : 40;
        const min = typeof s.minLength === 'number' ? s.minLength : 1;
        return fc.integer({ min: 0, max: 1e6 }).map((n) => {
          const text = `fuzz${n}pass`;
          return text.padEnd(min, 'x').slice(0, Math.max(min, Math.min(max, text.length)));
        });
      }
    }
  }

  /** Values for one field: mostly hostile, sometimes plausible. */
  fieldValue(schema: Schema | undefined, name: string): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const hostile = fc.constantFrom(...HOSTILE_JSON);
    const hostileValue = s.type === 'array' ? chance(0.5, fc.array(hostile, { minLength: 1, maxLength: 4 }), hostile) : hostile;
    return chance(0.35, this.plausible(schema, relationBase(name)), hostileValue);
  }

  body(schema: Schema | undefined): fc.Arbitrary<Body> {
    const s = this.resolve(schema);
    const fields = Object.entries<Schema>(s.properties ?? {}).map(([key, field]) => {
      const value = this.fieldValue(field, key).map((v) => [key, v] as const);
      return maybe((s.required ?? []).includes(key) ? 0.95 : 0.7, value);
    });
    const extra = maybe(
      0.15,
      fc.tuple(fc.constantFrom('extra', 'id', 'is_staff', 'author', '__proto__', 'password'), fc.constantFrom(...HOSTILE_JSON)),
    );
    const object = fc.tuple(fc.tuple(...fields), extra).map(([entries, more]): Body => {
      const out: Record<string, unknown> = {};
      for (const entry of entries) if (entry) out[entry[0]] = entry[1];
      if (more) out[more[0]] = more[1];
      return { json: out };
    });
    return fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(...HOSTILE_BODIES).map((raw): Body => ({ raw })) },
      { weight: 7, arbitrary: fc.constantFrom(...HOSTILE_JSON).map((json): Body => ({ json })) },
      { weight: 3, arbitrary: fc.constant<Body>(undefined) },
      { weight: 80, arbitrary: object },
    );
  }

  pathValue(base: string, schema: Schema | undefined): fc.Arbitrary<string> {
    const keys = this.options.keys[base] ?? [];
    return fc.oneof(
      { weight: 35, arbitrary: (keys.length > 0 ? fc.constantFrom(...keys) : this.plausible(schema, undefined)).map(String) },
      { weight: 10, arbitrary: fc.constantFrom(...RAW_PATH_VALUES) },
      { weight: 55, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((v) => encode(String(v))) },
    );
  }

  query(parameters: readonly Parameter[]): fc.Arbitrary<string> {
    const parts = parameters.map((p) => {
      const value = fc.oneof(
        { weight: 50, arbitrary: fc.constantFrom(...multiTermValues(p)) },
        { weight: 285, arbitrary: this.plausible(p.schema, relationBase(p.name)) },
        { weight: 665, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
      );
      const part = value.map((v) => `${encode(p.name)}=${encode(String(v))}`);
      // Absent, once or (one time in ten) twice.
      return maybe(0.45, chance(0.1, fc.tuple(part, part), fc.tuple(part)));
    });
    const junk = maybe(0.1, fc.constantFrom('page=%ZZ', 'unknown=1', 'a[b]=1', 'ordering=', 'page_size=0', '=x', '&&', 'title=%00'));
    return fc.tuple(fc.tuple(...parts), junk).map(([chosen, more]) => {
      const all = [...chosen.flatMap((c) => c ?? []), ...(more ? [more] : [])];
      return all.length > 0 ? `?${all.join('&')}` : '';
    });
  }

  /** The requests of one operation. */
  requests(path: string, method: (typeof METHODS)[number], op: OpenApiOperation): fc.Arbitrary<FuzzRequest> {
    const parameters = op.parameters ?? [];
    const bodySchema = op.requestBody?.content?.['application/json']?.schema;
    const base =
      path
        .replace(/^\/api/, '')
        .split('/')
        .filter(Boolean)[0] ?? '';
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const pathValues = fc.tuple(
      ...names.map((name) => this.pathValue(base, parameters.find((p) => p.in === 'path' && p.name === name)?.schema)),
    );
    const body = method === 'get' || method === 'delete' ? maybe(0.05, this.body(bodySchema)) : this.body(bodySchema);
    return fc
      .tuple(pathValues, this.query(parameters.filter((p) => p.in === 'query')), fc.constantFrom(...this.options.auths), body)
      .map(([values, query, auth, b]) => {
        let i = 0;
        const target = path.replace(/\{[^}]+\}/g, () => values[i++]);
        return { method, url: `${this.options.prefix ?? ''}${target}${query}`, auth, body: b };
      });
  }

  async run(app: Express): Promise<FuzzReport> {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    const report: FuzzReport = { requests: 0, statuses: {}, failures: [] };
    try {
      let index = 0;
      for (const [path, item] of Object.entries(this.doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (!op) continue;
          // Each operation from its own seed: one operation more or less leaves the others' requests as they were.
          const seed = (this.options.seed + index++) | 0;
          const property = fc.asyncProperty(
            this.requests(path, method, op),
            async (r) => (await this.send(origin, r.method, r.url, r.auth, r.body, report)) === undefined,
          );
          // No shrinking: a hang costs its full timeout, and the failing request is already reported.
          const before = report.failures.length;
          const details = await fc.check(property, { seed, numRuns: this.options.perOperation, endOnFailure: true });
          if (details.failed) {
            // The failing request is reported by send (else the property threw): it gets what replays it.
            const replay = `fast-check seed ${details.seed}, path ${JSON.stringify(details.counterexamplePath)}`;
            if (report.failures.length > before) report.failures[report.failures.length - 1].body += ` (${replay})`;
            else
              report.failures.push({
                request: `${method.toUpperCase()} ${path}`,
                status: 'error',
                body: `${String(details.errorInstance)} (${replay})`,
              });
          }
        }
      }
      await this.sweep(origin, report);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    return report;
  }

  /**
   * Every query parameter of every GET, alone, with each of SWEEP_STRINGS and its multi-term values:
   * the random pass may miss one parameter's edge (`?created_at=0000-01-01`); this pass does not.
   */
  private async sweep(origin: string, report: FuzzReport): Promise<void> {
    const auth = this.options.sweepAuth ?? { name: 'none', header: undefined };
    for (const [path, item] of Object.entries(this.doc.paths)) {
      const op = item.get;
      if (!op) continue;
      const base =
        path
          .replace(/^\/api/, '')
          .split('/')
          .filter(Boolean)[0] ?? '';
      const target = path.replace(/\{[^}]+\}/g, () => String(this.options.keys[base]?.[0] ?? 1));
      for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
        for (const value of [...SWEEP_STRINGS, ...multiTermValues(p)]) {
          await this.send(
            origin,
            'get',
            `${this.options.prefix ?? ''}${target}?${encode(p.name)}=${encode(value)}`,
            auth,
            undefined,
            report,
          );
        }
      }
    }
  }

  /** Sends one request and counts its status; returns the failure it is (a 5xx, a hang, an error), if it is one. */
  private async send(
    origin: string,
    method: (typeof METHODS)[number],
    url: string,
    auth: FuzzAuth,
    body: Body,
    report: FuzzReport,
  ): Promise<FuzzFailure | undefined> {
    let req = request(origin)[method](url).timeout({ response: this.options.timeoutMs, deadline: this.options.timeoutMs });
    if (auth.header !== undefined) req = req.set('Authorization', auth.header);
    let shown = '';
    if (body?.raw) {
      req = req.set('Content-Type', body.raw.type).send(body.raw.raw);
      shown = typeof body.raw.raw === 'string' ? body.raw.raw.slice(0, 200) : `<bytes ${body.raw.raw.toString('hex').slice(0, 60)}>`;
    } else if (body && 'json' in body) {
      req = req.set('Content-Type', 'application/json').send(JSON.stringify(body.json));
      shown = String(JSON.stringify(body.json)).slice(0, 300);
    }
    report.requests += 1;
    const label = `${method.toUpperCase()} ${url.slice(0, 300)} [${auth.name}] ${shown}`;
    const fail = (failure: FuzzFailure) => {
      report.failures.push(failure);
      return failure;
    };
    try {
      const res = await req;
      report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
      if (res.status >= 500) return fail({ request: label, status: res.status, body: res.text.slice(0, 300) });
    } catch (err) {
      const e = err as { timeout?: unknown; status?: number; response?: { text?: string }; message?: string };
      if (e.status !== undefined && e.response) {
        report.statuses[e.status] = (report.statuses[e.status] ?? 0) + 1;
        if (e.status >= 500) return fail({ request: label, status: e.status, body: String(e.response.text).slice(0, 300) });
        return undefined;
      }
      const status = e.timeout ? 'timeout' : 'error';
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      return fail({ request: label, status, body: String(e.message) });
    }
    return undefined;
  }
}

/** The route base a field or parameter named after a relation points at (`category` → `categories`). */
function relationBase(name: string): string | undefined {
  return ({ category: 'categories', author: 'users', tag: 'tags', add: 'tags', remove: 'tags' } as Record<string, string>)[name];
}

/** Fuzzes every operation of `doc` against `app`, sequentially, and reports what came back. */
export function fuzz(app: Express, doc: OpenApiDocument, options: FuzzOptions): Promise<FuzzReport> {
  return new Fuzzer(doc, options).run(app);
}

/** `{"200": 12, "422": 340}` → `200: 12, 422: 340`, statuses in order. */
export function formatStatuses(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
}
