/**
 * `svcgen pull DATABASE_URL [--out DIR]`: specs written from an existing SQLite or PostgreSQL
 * database, so that a team can start from what it has. One resource file per table (its name the
 * table's, its model the singular in PascalCase), with each column as a field: the type from the
 * column's (lengths, nullability, simple defaults kept, a PostgreSQL array's too), foreign keys as `foreign_key` fields with
 * their delete rule, one-column unique indexes as `unique`, other indexes as `indexes`. A table
 * holding only two foreign keys (and an `id`) is a many-to-many join table: it becomes a
 * `many_to_many` field of the first side, with a relation endpoint. Every resource is public
 * (`auth: null`): add authentication before serving it. The database is only read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import pluralize from 'pluralize';
import type { ListItemType } from '@svcgen/runtime/catalogue';
import { introspectUrl, type ColumnInfo, type TableInfo } from '@svcgen/runtime/introspect';
import { pascalCase } from '../model/names';

/** A folder or database `pull` cannot work with: one line, exit 1. */
export class PullError extends Error {}

/** A field type of the spec language from a column's database type, with the options it implies. */
function fieldType(c: ColumnInfo): { type: string; of?: string; max_length?: number } {
  const t = c.type;
  if (c.list) return { type: 'list', of: c.list };
  if (c.name === 'password') return { type: 'password', ...(c.maxLength ? { max_length: c.maxLength } : {}) };
  if (/^(varchar|character varying|nvarchar|char|character)/.test(t))
    return c.maxLength === 36 && /uuid/.test(c.name)
      ? { type: 'uuid' }
      : { type: 'string', ...(c.maxLength ? { max_length: c.maxLength } : {}) };
  if (t === 'uuid') return { type: 'uuid' };
  if (/^(bigint|int8|bigserial)/.test(t)) return { type: 'big_integer' };
  if (/^(integer|int|int4|smallint|serial|tinyint|mediumint)/.test(t)) return { type: 'integer' };
  if (/^(boolean|bool)/.test(t)) return { type: 'boolean' };
  if (/^(timestamp|datetime)/.test(t)) return { type: 'datetime' };
  if (t === 'date') return { type: 'date' };
  if (/^(real|float|double)/.test(t)) return { type: 'float' };
  if (/^(numeric|decimal)/.test(t)) return { type: 'float' };
  if (/^json/.test(t)) return { type: 'json' };
  return { type: 'text' };
}

/** A column default the spec can say (a number, a boolean, a quoted string, a list of them), or undefined. */
function defaultOf(c: ColumnInfo, type: string): unknown {
  const d = c.defaultValue;
  if (d === null) return undefined;
  if (type === 'list') return c.list ? listDefaultOf(d, c.list) : undefined;
  const text = d.replace(/::[a-z ]+(\[\])?$/i, '').trim();
  if (type === 'boolean') {
    if (/^(true|'?1'?)$/i.test(text)) return true;
    if (/^(false|'?0'?)$/i.test(text)) return false;
    return undefined;
  }
  if (['integer', 'big_integer', 'float'].includes(type))
    return /^'?-?\d+(\.\d+)?'?$/.test(text) ? Number(text.replace(/'/g, '')) : undefined;
  const quoted = /^'((?:[^']|'')*)'$/.exec(text);
  if (quoted && ['string', 'text', 'password'].includes(type)) return quoted[1].replace(/''/g, "'");
  return undefined;
}

/** A cast PostgreSQL writes after an array default: `::text[]`, `::character varying(20)[]`. */
const ARRAY_CAST = String.raw`(?:::[a-z ]+(?:\(\d+(?:,\d+)?\))?\[\])?`;

/**
 * The items of a PostgreSQL array column's default, as the list field's `default`: an array literal
 * (`'{}'::text[]`, `'{M,"X L"}'::text[]`, `'{1,2}'::integer[]`, `'{t}'::boolean[]`) or an ARRAY
 * constructor (`ARRAY['a'::text, 'b'::text]`); undefined for anything else (an expression, a NULL
 * item, a nested array), which the specs cannot say.
 */
function listDefaultOf(d: string, items: ListItemType): unknown[] | undefined {
  const text = d.trim();
  let raw: (string | null)[] | undefined;
  const literal = new RegExp(`^'((?:[^']|'')*)'${ARRAY_CAST}$`, 'i').exec(text);
  const constructed = new RegExp(`^ARRAY\\[(.*)\\]${ARRAY_CAST}$`, 'is').exec(text);
  if (literal) raw = arrayLiteralItems(literal[1].replace(/''/g, "'"));
  else if (constructed) raw = arrayConstructorItems(constructed[1]);
  if (!raw || raw.some((v) => v === null)) return undefined;
  const values = (raw as string[]).map((v): unknown => {
    if (items === 'integer' || items === 'big_integer' || items === 'float')
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : undefined;
    if (items === 'boolean') return /^(t|true)$/i.test(v) ? true : /^(f|false)$/i.test(v) ? false : undefined;
    return v;
  });
  return values.includes(undefined) ? undefined : values;
}

/** The items of an array literal's text (`{a,"b \"c\"",NULL}`; null for NULL), or undefined when it is not a flat one. */
function arrayLiteralItems(text: string): (string | null)[] | undefined {
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  const body = text.slice(1, -1);
  if (!body.trim()) return [];
  const out: (string | null)[] = [];
  let i = 0;
  for (;;) {
    while (body[i] === ' ') i++;
    let item = '';
    if (body[i] === '"') {
      for (i++; i < body.length && body[i] !== '"'; i++) item += body[i] === '\\' ? body[++i] : body[i];
      if (body[i++] !== '"') return undefined;
      out.push(item);
    } else {
      for (; i < body.length && body[i] !== ','; i++) {
        if ('{}"'.includes(body[i])) return undefined;
        item += body[i];
      }
      item = item.trim();
      out.push(/^null$/i.test(item) ? null : item);
    }
    while (body[i] === ' ') i++;
    if (i >= body.length) return out;
    if (body[i++] !== ',') return undefined;
  }
}

/** The items of an ARRAY constructor's list (`'a'::text, 'b'::text`, `1, 2`); undefined for an expression. */
function arrayConstructorItems(text: string): (string | null)[] | undefined {
  if (!text.trim()) return [];
  const item = /\s*(?:'((?:[^']|'')*)'|(-?[\w.]+))(?:::[a-z ]+(?:\(\d+(?:,\d+)?\))?)?\s*(,|$)/iy;
  const out: (string | null)[] = [];
  while (item.lastIndex < text.length) {
    const m = item.exec(text);
    if (!m) return undefined;
    out.push(m[1] !== undefined ? m[1].replace(/''/g, "'") : /^null$/i.test(m[2]) ? null : m[2]);
    if (!m[3]) break;
  }
  return out;
}

const ON_DELETE: Record<string, string> = { cascade: 'cascade', 'set null': 'set_null', restrict: 'protect', 'no action': 'protect' };

function yamlValue(v: unknown): string {
  if (typeof v === 'string')
    return /^[A-Za-z_][A-Za-z0-9_ ]*$/.test(v) && !['true', 'false', 'null', 'yes', 'no'].includes(v.toLowerCase()) ? v : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(yamlValue).join(', ')}]`;
  return String(v);
}
function flowMap(m: Record<string, unknown>): string {
  return `{${Object.entries(m)
    .map(([k, v]) => `${k}: ${yamlValue(v)}`)
    .join(', ')}}`;
}

/** A join table: two single-column foreign keys, and nothing else but an `id`. */
function isJoinTable(t: TableInfo): boolean {
  const rest = t.columns.filter((c) => !t.foreignKeys.some((f) => f.column === c.name));
  return t.foreignKeys.length === 2 && rest.every((c) => c.name === 'id') && t.foreignKeys[0].table !== t.foreignKeys[1].table;
}

/** The spec files of a database's tables: path relative to the specs folder → text. */
export function specsFromTables(tables: TableInfo[], title: string): Map<string, string> {
  const files = new Map<string, string>();
  // The side that owns a join table: the table its name starts with (`articles_tags` → articles), else the first foreign key's.
  const joins = tables.filter(isJoinTable).map((j) => {
    const owner = j.foreignKeys.find((f) => j.name.startsWith(`${f.table}_`)) ?? j.foreignKeys[0];
    return { ...j, foreignKeys: [owner, ...j.foreignKeys.filter((f) => f !== owner)] };
  });
  const resources = tables.filter((t) => !isJoinTable(t));
  const modelOf = new Map(resources.map((t) => [t.name, pascalCase(pluralize.singular(t.name))]));
  files.set(
    'service.yaml',
    `# Written by svcgen pull from an existing database. Every resource is public: add auth before serving it.\ntitle: ${yamlValue(title)}\nversion: 0.1.0\nbase_path: /api\n`,
  );
  for (const t of resources) {
    const lines: string[] = [];
    const singular = pluralize.singular(t.name).replace(/_/g, ' ');
    lines.push(
      `# Pulled from the table ${t.name}.`,
      `model: ${modelOf.get(t.name)}`,
      `table: ${t.name}`,
      `verbose_name: ${yamlValue(singular)}`,
      `verbose_name_plural: ${yamlValue(t.name.replace(/_/g, ' '))}`,
      'fields:',
    );
    const implicitId =
      t.primaryKey.length === 1 && t.primaryKey[0] === 'id' && fieldType(t.columns.find((c) => c.name === 'id')!).type === 'integer';
    const uniqueColumns = new Set(t.indexes.filter((i) => i.unique && i.columns.length === 1).map((i) => i.columns[0]));
    const fkColumns = new Map(t.foreignKeys.map((f) => [f.column, f]));
    const fieldNames: string[] = [];
    const secret = new Set<string>();
    for (const c of t.columns) {
      if (implicitId && c.name === 'id') continue;
      const fk = fkColumns.get(c.name);
      const spec: Record<string, unknown> = {};
      let name = c.name;
      if (fk && modelOf.has(fk.table)) {
        name = c.name.replace(/_id$/, '');
        spec.type = 'foreign_key';
        spec.to = modelOf.get(fk.table);
        spec.on_delete = ON_DELETE[fk.onDelete] ?? 'protect';
      } else {
        const ft = fieldType(c);
        Object.assign(spec, ft);
        const d = defaultOf(c, ft.type);
        if (d !== undefined) spec.default = d;
        if (ft.type === 'text' && d === '') spec.blank = true;
      }
      if (c.nullable) spec.null = true;
      if (t.primaryKey.length === 1 && t.primaryKey[0] === c.name) spec.primary_key = true;
      if (uniqueColumns.has(c.name) && !spec.primary_key) spec.unique = true;
      lines.push(`  ${name}: ${flowMap(spec)}`);
      fieldNames.push(name);
      if (spec.type === 'password') secret.add(name);
    }
    const relations: string[] = [];
    for (const j of joins.filter((j) => j.foreignKeys[0].table === t.name)) {
      const [, other] = j.foreignKeys;
      if (!modelOf.has(other.table)) continue;
      const field = j.name.startsWith(`${t.name}_`) ? j.name.slice(t.name.length + 1) : other.table;
      lines.push(`  ${field}: ${flowMap({ type: 'many_to_many', to: modelOf.get(other.table) })}`);
      relations.push(
        `    - ${flowMap({ model: modelOf.get(other.table), related_name: field, path: field, append_slash: true, add: true, remove: true, get: true })}`,
      );
    }
    const composite = t.indexes.filter((i) => i.columns.length > 1 || !i.unique);
    const fkIndexed = new Set(t.foreignKeys.map((f) => f.column));
    const written = composite.filter((i) => !(i.columns.length === 1 && fkIndexed.has(i.columns[0])));
    if (written.length) {
      lines.push('indexes:');
      for (const i of written) {
        const cols = i.columns.map((col) => (fkColumns.has(col) && modelOf.has(fkColumns.get(col)!.table) ? col.replace(/_id$/, '') : col));
        lines.push(`  - ${i.unique ? flowMap({ fields: cols, unique: true }) : yamlValue(cols)}`);
      }
    }
    // Read with every column but a password; written with every field (the generated defaults).
    const readable = [...(implicitId ? ['id'] : []), ...fieldNames.filter((f) => !secret.has(f))];
    lines.push('serializer:', '  ReadSerializer:', `    fields: ${yamlValue(readable)}`);
    lines.push('viewset:', '  auth: null');
    if (relations.length) lines.push('  m2m_relations:', ...relations);
    files.set(`resources/${t.name}.yaml`, `${lines.join('\n')}\n`);
  }
  return files;
}

/** `svcgen pull`: reads the database at `url` and writes the specs into `out`, which must not hold any. */
export async function pull(url: string, out: string, title = 'Pulled API'): Promise<string[]> {
  if (fs.existsSync(out) && fs.readdirSync(out).length) throw new PullError(`${out} is not empty; give svcgen pull a new folder (--out)`);
  const tables = await introspectUrl(url);
  if (!tables.length) throw new PullError('the database has no tables to pull');
  const files = specsFromTables(tables, title);
  for (const [rel, text] of files) {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.writeFileSync(path.join(out, rel), text);
  }
  return [...files.keys()];
}
