/**
 * A seeded, bounded fuzzer driven by a service's OpenAPI document: for every operation it sends
 * requests whose path parameters, query parameters and body fields hold hostile values (wrong
 * types, numbers past every integer width, NaN strings, empty and very long strings, NUL, lone
 * surrogates, unicode, SQL-ish text, LIKE wildcards, arrays and objects where scalars go, dates
 * outside any calendar a database stores, malformed and non-UTF-8 bodies, long multi-term values:
 * searches of many words, long comma-separated lists and orderings), with and without a bearer
 * token. The same seed sends the same requests in the same order.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';

/** mulberry32: a small, well-distributed 32-bit PRNG; the same seed gives the same sequence. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
    ...[1000, 1001].map((n) => repeated(Array.from({ length: n }, (_, i) => String(i + 1)), n, ',')),
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

class Fuzzer {
  private readonly random: () => number;
  constructor(private readonly doc: OpenApiDocument, private readonly options: FuzzOptions) {
    this.random = prng(options.seed);
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

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

  /** A value the schema accepts, more or less: a nearby valid value gets past the first checks. */
  plausible(schema: Schema | undefined, base: string | undefined, depth = 0): unknown {
    const s = this.resolve(schema);
    const variants = s.anyOf ?? s.oneOf;
    if (Array.isArray(variants) && variants.length > 0) return this.plausible(this.pick(variants), base, depth + 1);
    if (Array.isArray(s.enum) && s.enum.length > 0) return this.pick(s.enum);
    const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
    switch (type) {
      case 'integer': {
        const keys = base ? this.options.keys[base] : undefined;
        if (keys && keys.length > 0 && this.chance(0.7)) return this.pick(keys);
        const min = typeof s.minimum === 'number' ? s.minimum : -5;
        const max = typeof s.maximum === 'number' ? s.maximum : 5;
        return this.chance(0.3) ? this.pick([min, max]) : this.int(Math.max(min, -5), Math.min(max, 5));
      }
      case 'number':
        return this.pick([0, 1.25, -3, 100]);
      case 'boolean':
        return this.chance(0.5);
      case 'array':
        if (depth > 3) return [];
        return Array.from({ length: this.int(0, 3) }, () => this.plausible(s.items, base, depth + 1));
      case 'object': {
        if (depth > 3) return {};
        const out: Record<string, unknown> = {};
        for (const [key, field] of Object.entries<Schema>(s.properties ?? {})) {
          if ((s.required ?? []).includes(key) || this.chance(0.6)) out[key] = this.plausible(field, key, depth + 1);
        }
        return out;
      }
      default: {
        if (s.format === 'email') return `f${this.int(0, 999)}@example.com`;
        if (s.format === 'date-time') return this.pick(['2024-05-06T07:08:09Z', '2024-05-06T07:08:09.123+02:00']);
        if (s.format === 'date') return '2024-05-06';
        if (s.format === 'uri') return 'https://example.com/a';
        if (s.format === 'uuid') return '123e4567-e89b-12d3-a456-426614174000';
        const max = typeof s.maxLength === 'number' ? s.maxLength : 40;
        const min = typeof s.minLength === 'number' ? s.minLength : 1;
        const text = `fuzz${this.int(0, 1e6)}pass`;
        return text.padEnd(min, 'x').slice(0, Math.max(min, Math.min(max, text.length)));
      }
    }
  }

  /** A value for one field: mostly hostile, sometimes plausible. */
  fieldValue(schema: Schema | undefined, name: string): unknown {
    if (this.chance(0.35)) return this.plausible(schema, relationBase(name));
    const s = this.resolve(schema);
    if (s.type === 'array' && this.chance(0.5)) {
      return Array.from({ length: this.int(1, 4) }, () => this.pick(HOSTILE_JSON));
    }
    return this.pick(HOSTILE_JSON);
  }

  body(schema: Schema | undefined): { json?: unknown; raw?: { raw: string | Buffer; type: string } } | undefined {
    const roll = this.random();
    if (roll < 0.1) return { raw: this.pick(HOSTILE_BODIES) };
    if (roll < 0.17) return { json: this.pick(HOSTILE_JSON) };
    if (roll < 0.2) return undefined;
    const s = this.resolve(schema);
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries<Schema>(s.properties ?? {})) {
      const required = (s.required ?? []).includes(key);
      if (!required && this.chance(0.3)) continue;
      if (required && this.chance(0.05)) continue;
      out[key] = this.fieldValue(field, key);
    }
    if (this.chance(0.15)) out[this.pick(['extra', 'id', 'is_staff', 'author', '__proto__', 'password'])] = this.pick(HOSTILE_JSON);
    return { json: out };
  }

  pathValue(name: string, base: string, schema: Schema | undefined): string {
    const roll = this.random();
    if (roll < 0.35) {
      const keys = this.options.keys[base] ?? [];
      return String(keys.length > 0 ? this.pick(keys) : this.plausible(schema, undefined));
    }
    if (roll < 0.45) return this.pick(RAW_PATH_VALUES);
    return encode(String(this.pick(HOSTILE_STRINGS)));
  }

  query(parameters: readonly Parameter[]): string {
    const parts: string[] = [];
    for (const p of parameters) {
      if (!this.chance(0.45)) continue;
      const repeat = this.chance(0.1) ? 2 : 1;
      for (let i = 0; i < repeat; i++) {
        const roll = this.random();
        const value = roll < 0.05 ? this.pick(multiTermValues(p)) : roll < 0.335 ? this.plausible(p.schema, relationBase(p.name)) : this.pick(HOSTILE_STRINGS);
        parts.push(`${encode(p.name)}=${encode(String(value))}`);
      }
    }
    if (this.chance(0.1)) parts.push(this.pick(['page=%ZZ', 'unknown=1', 'a[b]=1', 'ordering=', 'page_size=0', '=x', '&&', 'title=%00']));
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  }

  async run(app: Express): Promise<FuzzReport> {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    const report: FuzzReport = { requests: 0, statuses: {}, failures: [] };
    try {
      for (const [path, item] of Object.entries(this.doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (!op) continue;
          const parameters = op.parameters ?? [];
          const bodySchema = op.requestBody?.content?.['application/json']?.schema;
          const base = path.replace(/^\/api/, '').split('/').filter(Boolean)[0] ?? '';
          for (let n = 0; n < this.options.perOperation; n++) {
            const target = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
              this.pathValue(name, base, parameters.find((p) => p.in === 'path' && p.name === name)?.schema),
            );
            const url = `${this.options.prefix ?? ''}${target}${this.query(parameters.filter((p) => p.in === 'query'))}`;
            const auth = this.pick(this.options.auths);
            const body = method === 'get' || method === 'delete' ? (this.chance(0.05) ? this.body(bodySchema) : undefined) : this.body(bodySchema);
            await this.send(origin, method, url, auth, body, report);
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
      const base = path.replace(/^\/api/, '').split('/').filter(Boolean)[0] ?? '';
      const target = path.replace(/\{[^}]+\}/g, () => String(this.options.keys[base]?.[0] ?? 1));
      for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
        for (const value of [...SWEEP_STRINGS, ...multiTermValues(p)]) {
          await this.send(origin, 'get', `${this.options.prefix ?? ''}${target}?${encode(p.name)}=${encode(value)}`, auth, undefined, report);
        }
      }
    }
  }

  private async send(
    origin: string,
    method: (typeof METHODS)[number],
    url: string,
    auth: FuzzAuth,
    body: ReturnType<Fuzzer['body']>,
    report: FuzzReport,
  ): Promise<void> {
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
    try {
      const res = await req;
      report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
      if (res.status >= 500) report.failures.push({ request: label, status: res.status, body: res.text.slice(0, 300) });
    } catch (err) {
      const e = err as { timeout?: unknown; status?: number; response?: { text?: string }; message?: string };
      if (e.status !== undefined && e.response) {
        report.statuses[e.status] = (report.statuses[e.status] ?? 0) + 1;
        if (e.status >= 500) report.failures.push({ request: label, status: e.status, body: String(e.response.text).slice(0, 300) });
        return;
      }
      const status = e.timeout ? 'timeout' : 'error';
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      report.failures.push({ request: label, status, body: String(e.message) });
    }
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
