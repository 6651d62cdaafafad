/**
 * Schema migrations from spec changes, like Django's makemigrations: the committed snapshot of the
 * database schema (`migrations/schema.json` in the output folder) is compared with the schema the
 * current model implies, and the difference becomes the next numbered Knex migration. Committed
 * migrations are never rewritten. Pure: the history is read once by `readMigrationHistory`, and
 * `planMigrations` turns (history, model) into code lines or diagnostics.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  columnStatement,
  createSearchIndexStatement,
  createTableRuntime,
  columnsRuntime,
  createTableStatements,
  CREATE_FOLDED_UNIQUE,
  CREATE_SEARCH_INDEX,
  createFoldedUniqueStatement,
  dropIndexStatement,
  dropSearchIndexStatement,
  DROP_FOLDED_UNIQUE,
  DROP_SEARCH_INDEX,
  dropFoldedUniqueStatement,
  dropTableStatement,
  RENAME_SEARCH_INDEX,
  indexStatement,
  type DbColumn,
  type DbIndex,
  type DbSchema,
  type DbTable,
} from './db-schema';
import { SpecError, type Diagnostic } from '../load/diagnostics';
import { displayPath } from '../load/load';
import type { Field, ServiceModel, SourceRef } from '../model/model';
import { literal } from '../model/names';

/** The snapshot, relative to the output folder. */
export const SNAPSHOT_FILE = 'migrations/schema.json';
export const INITIAL_MIGRATION = '0001_initial';
const MIGRATION_NAME = /^(\d{4})_[a-z0-9_]+$/;

/** The schema after the listed migrations, as committed in `migrations/schema.json`. */
export interface Snapshot extends DbSchema {
  migrations: string[];
}

export interface MigrationHistory {
  /** The committed snapshot; undefined before the first build. */
  snapshot?: Snapshot;
  /** Its text, for positions in diagnostics. */
  snapshotText?: string;
  /** How diagnostics name the snapshot file. */
  snapshotFile: string;
  /** Every committed migration, in order, with its exact bytes. */
  migrations: { name: string; text: string }[];
}

/** A migration this build writes. */
export interface NewMigration {
  name: string;
  /** One line per step, e.g. `add column articles.rating`. */
  changes: string[];
  up: string[];
  down: string[];
  /** The runtime's functions its code calls, in the order first called. */
  runtime: string[];
}

export interface MigrationPlan {
  /** Committed migrations, written back byte for byte. */
  existing: { name: string; text: string }[];
  /** The migration for the difference, when there is one. */
  next?: NewMigration;
  /** Every migration name in order (the index lists them all). */
  names: string[];
}

export interface PlanOptions {
  /** Write steps that lose data (dropping tables or columns, narrowing types). */
  allowDestructive?: boolean;
  /** One-off values for existing rows, by `table.field` (or `table.column`), as given on the command line. */
  defaults?: Record<string, string>;
  /** A diagnostic at a spec node (the key of the last path element). */
  at(source: SourceRef, message: string): Diagnostic;
}

/** A `--default` that names nothing, or a value of the wrong kind: a usage problem, not a spec one. */
export class MigrationOptionError extends Error {}

/* ---------------------------------------------------------------- history */

function diagnosticIn(file: string, message: string, text?: string, needle?: RegExp): Diagnostic {
  if (text && needle) {
    const lines = text.split('\n');
    const i = lines.findIndex((l) => needle.test(l));
    if (i >= 0) return { file, line: i + 1, column: lines[i].search(/\S/) + 1, message };
  }
  return { file, line: 1, column: 1, message };
}

/**
 * The committed migration history of `outDir`: its snapshot and the text of every migration it
 * lists. A snapshot without a `migrations` list (written before it had one) stands for `0001_initial`.
 */
export function readMigrationHistory(outDir: string, cwd = process.cwd()): MigrationHistory {
  const dir = path.join(outDir, 'migrations');
  const snapshotPath = path.join(outDir, SNAPSHOT_FILE);
  const snapshotFile = displayPath(snapshotPath, cwd);
  const onDisk = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.ts') && MIGRATION_NAME.test(f.slice(0, -3)))
        .map((f) => f.slice(0, -3))
        .sort()
    : [];
  if (!fs.existsSync(snapshotPath)) {
    if (onDisk.length) {
      throw new SpecError([
        {
          file: snapshotFile,
          line: 1,
          column: 1,
          message:
            `missing: ${onDisk.map((n) => `migrations/${n}.ts`).join(', ')} exist but the snapshot of the schema they build does not, ` +
            'so the next migration cannot be computed; restore it from version control (git checkout -- <out>/migrations/schema.json), ' +
            'or delete the migrations folder to start over from a new 0001_initial',
        },
      ]);
    }
    return { snapshotFile, migrations: [] };
  }
  const text = fs.readFileSync(snapshotPath, 'utf8');
  let data: Partial<Snapshot>;
  try {
    data = JSON.parse(text) as Partial<Snapshot>;
  } catch (err) {
    throw new SpecError([
      {
        file: snapshotFile,
        line: 1,
        column: 1,
        message: `not valid JSON (${(err as Error).message}); restore it from version control, it is written by svcgen build`,
      },
    ]);
  }
  if (!Array.isArray(data.tables)) {
    throw new SpecError([
      {
        file: snapshotFile,
        line: 1,
        column: 1,
        message: 'no "tables" list; restore it from version control, it is written by svcgen build',
      },
    ]);
  }
  // A snapshot written before it listed its migrations stands for the one migration builds wrote then.
  const names = Array.isArray(data.migrations) ? data.migrations.map(String) : [INITIAL_MIGRATION];
  const problems: Diagnostic[] = [];
  const migrations: MigrationHistory['migrations'] = [];
  for (const name of names) {
    const p = path.join(dir, `${name}.ts`);
    if (!MIGRATION_NAME.test(name))
      problems.push(diagnosticIn(snapshotFile, `"${name}" is not a migration name (NNNN_slug)`, text, new RegExp(`"${name}"`)));
    else if (!fs.existsSync(p)) {
      problems.push(
        diagnosticIn(
          snapshotFile,
          `migrations/${name}.ts is listed here but missing; restore it from version control (a database that applied it needs it)`,
          text,
          new RegExp(`^\\s*"${name}",?$`),
        ),
      );
    } else migrations.push({ name, text: fs.readFileSync(p, 'utf8') });
  }
  for (const name of onDisk) {
    if (!names.includes(name)) {
      problems.push(
        diagnosticIn(
          snapshotFile,
          `migrations/${name}.ts is not listed in this snapshot; it was not written by svcgen build from these specs (delete it, or restore the snapshot that lists it)`,
          text,
          /"migrations"/,
        ),
      );
    }
  }
  if (problems.length) throw new SpecError(problems);
  return { snapshot: { tables: data.tables as DbTable[], migrations: names }, snapshotText: text, snapshotFile, migrations };
}

/** The snapshot file's bytes. */
export function snapshotJson(schema: DbSchema, migrations: string[]): string {
  return `${JSON.stringify({ tables: schema.tables, migrations }, null, 2)}\n`;
}

/* ------------------------------------------------------------------ steps */

const q = literal;

function alterTable(table: string, body: string[]): string[] {
  return [`  await knex.schema.alterTable(${q(table)}, (t) => {`, ...body.map((l) => `    ${l}`), '  });'];
}

/** The column's type, nullability and default, for `.alter()` (unique, index and foreign key are separate steps). */
function alterStatement(c: DbColumn): string {
  return `${columnStatement({ ...c, unique: false, primary: false, index: false, references: undefined }).slice(0, -1)}.alter();`;
}

/** Knex's names for single-column indexes and constraints (`${table}_${column}_${kind}`). */
export function constraintName(table: string, columns: string[], kind: 'index' | 'unique' | 'foreign'): string {
  return `${table.replace(/\.|-/g, '_')}_${columns.join('_')}_${kind}`.toLowerCase();
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function definitionChanged(a: DbColumn, b: DbColumn): boolean {
  return (
    a.type !== b.type ||
    a.items !== b.items ||
    a.length !== b.length ||
    a.precision !== b.precision ||
    a.scale !== b.scale ||
    a.nullable !== b.nullable ||
    !sameValue(a.default, b.default)
  );
}

function describeType(c: DbColumn): string {
  if (c.type === 'list') return `list of ${c.items}`;
  if (c.length !== undefined) return `${c.type}(${c.length})`;
  if (c.precision !== undefined) return `${c.type}(${c.precision},${c.scale ?? 0})`;
  return c.type;
}

/** Why changing `a` into `b` can lose data, or undefined when every old value fits. */
function narrowing(a: DbColumn, b: DbColumn): string | undefined {
  if (a.type === 'list' && a.items !== b.items) return `type ${describeType(a)} → ${describeType(b)}`;
  if (a.type === b.type) {
    if (a.type === 'string' && (b.length ?? 255) < (a.length ?? 255)) return `max_length ${a.length} → ${b.length}`;
    if (a.type === 'decimal') {
      const [ap, as, bp, bs] = [a.precision ?? 0, a.scale ?? 0, b.precision ?? 0, b.scale ?? 0];
      if (bs < as || bp - bs < ap - as) return `decimal(${ap},${as}) → decimal(${bp},${bs})`;
    }
    return undefined;
  }
  const widening =
    (a.type === 'integer' && (b.type === 'bigInteger' || b.type === 'double')) ||
    (a.type === 'string' && b.type === 'text') ||
    (a.type === 'uuid' && (b.type === 'text' || (b.type === 'string' && (b.length ?? 255) >= 36)));
  return widening ? undefined : `type ${describeType(a)} → ${describeType(b)}`;
}

interface Step {
  change: string;
  slug: string;
  up: string[];
  /** Undefined when the step cannot be reversed: `down` then throws this reason. */
  down: string[] | { irreversible: string };
  /** The runtime's functions its lines call. */
  runtime?: string[];
  /** A column rename: its old and new name. */
  renamed?: { from: string; to: string };
}

/**
 * The runtime function a migration calls to rename a foreign key constraint: the database's
 * adapter says whether and how (PostgreSQL names them; SQLite's follow their column).
 */
const RENAME_FOREIGN_KEY = 'renameForeignKey';

function createTableStep(t: DbTable): Step {
  return {
    change: `create table ${t.name}`,
    slug: t.name,
    up: createTableStatements(t),
    down: [dropTableStatement(t)],
    runtime: createTableRuntime(t),
  };
}

function dropTableStep(t: DbTable): Step {
  return {
    change: `drop table ${t.name} (destructive)`,
    slug: `delete_${t.name}`,
    up: [
      `  // Destructive (written with --allow-destructive): the rows of ${t.name} are deleted.`,
      `  await knex.schema.dropTable(${q(t.name)});`,
    ],
    // The table comes back empty: its rows are gone.
    down: createTableStatements(t),
    runtime: createTableRuntime(t),
  };
}

function addColumnLines(table: string, c: DbColumn, fill: { value: unknown } | undefined): string[] {
  const lines: string[] = [];
  if (fill) lines.push(`  // Existing rows get the one-off value ${q(fill.value)} (given with --default ${table}.${c.name}=...).`);
  lines.push(
    ...alterTable(table, [columnStatement(fill ? { ...c, default: fill.value } : c), ...(c.index ? [`t.index([${q(c.name)}]);`] : [])]),
  );
  // The one-off value is not the column's default: new rows must give one.
  if (fill && c.default === undefined) lines.push(...alterTable(table, [alterStatement(c)]));
  return lines;
}

function addColumnStep(table: string, c: DbColumn, fill: { value: unknown } | undefined): Step {
  return {
    change: `add column ${table}.${c.name}`,
    slug: `${table}_${c.name}`,
    up: addColumnLines(table, c, fill),
    down: alterTable(table, [`t.dropColumn(${q(c.name)});`]),
    runtime: columnsRuntime([c]),
  };
}

function dropColumnStep(table: string, c: DbColumn): Step {
  const reversible = c.nullable || c.default !== undefined;
  return {
    change: `drop column ${table}.${c.name} (destructive)`,
    slug: `remove_${table}_${c.name}`,
    up: [
      `  // Destructive (written with --allow-destructive): the values of ${table}.${c.name} are deleted.`,
      ...alterTable(table, [`t.dropColumn(${q(c.name)});`]),
    ],
    down: reversible
      ? addColumnLines(table, c, undefined)
      : { irreversible: `it dropped column ${table}.${c.name}, which was NOT NULL without a default, and its values are gone` },
    runtime: reversible ? columnsRuntime([c]) : [],
  };
}

/** Renames a column, and the indexes and constraints Knex named after it, so later steps find them. */
function renameLines(table: string, from: DbColumn, toName: string): string[] {
  const lines = alterTable(table, [`t.renameColumn(${q(from.name)}, ${q(toName)});`]);
  const fix: string[] = [];
  if (from.index) fix.push(`t.dropIndex([], ${q(constraintName(table, [from.name], 'index'))});`, `t.index([${q(toName)}]);`);
  if (from.unique) fix.push(`t.dropUnique([], ${q(constraintName(table, [from.name], 'unique'))});`, `t.unique([${q(toName)}]);`);
  if (fix.length) lines.push(...alterTable(table, fix));
  if (from.references) {
    const names = [table, constraintName(table, [from.name], 'foreign'), constraintName(table, [toName], 'foreign')].map(q);
    lines.push(`  await ${RENAME_FOREIGN_KEY}(knex, ${names.join(', ')});`);
  }
  return lines;
}

function renameStep(table: string, from: DbColumn, to: DbColumn): Step {
  const renamed = { ...from, name: to.name };
  return {
    change: `rename column ${table}.${from.name} to ${to.name}`,
    slug: `rename_${table}_${from.name}_${to.name}`,
    up: renameLines(table, from, to.name),
    down: renameLines(table, renamed, from.name),
    runtime: from.references ? [RENAME_FOREIGN_KEY] : [],
    renamed: { from: from.name, to: to.name },
  };
}

/** Lines turning column `a` into `b` (same name): foreign key, unique and index off, definition, then on again. */
function alterLines(table: string, a: DbColumn, b: DbColumn, fill: { value: unknown } | undefined): string[] {
  const lines: string[] = [];
  const refChanged = !sameValue(a.references, b.references);
  const off: string[] = [];
  if (a.references && refChanged) off.push(`t.dropForeign([${q(a.name)}]);`);
  if (a.unique && !b.unique) off.push(`t.dropUnique([${q(a.name)}]);`);
  if (a.index && !b.index) off.push(`t.dropIndex([${q(a.name)}]);`);
  if (off.length) lines.push(...alterTable(table, off));
  if (definitionChanged(a, b)) {
    // A shorter max_length would truncate (PostgreSQL casts) or be ignored (SQLite): refuse instead.
    const limit = b.type === 'string' ? (b.length ?? 255) : undefined;
    if (limit !== undefined && (a.type === 'text' || (a.type === 'string' && (a.length ?? 255) > limit))) {
      lines.push(
        `  if (await knex(${q(table)}).whereRaw('length(??) > ?', [${q(a.name)}, ${limit}]).first()) {`,
        `    throw new Error(${q(`${table}.${a.name}: some values are longer than ${limit} characters, the new max_length; shorten them first`)});`,
        '  }',
      );
    }
    if (a.nullable && !b.nullable && fill) {
      lines.push(
        `  await knex(${q(table)}).whereNull(${q(a.name)}).update({ ${/^[A-Za-z_$][\w$]*$/.test(a.name) ? a.name : q(a.name)}: ${q(fill.value)} });`,
      );
    }
    lines.push(...alterTable(table, [alterStatement(b)]));
  }
  const on: string[] = [];
  if (b.unique && !a.unique) on.push(`t.unique([${q(b.name)}]);`);
  if (b.index && !a.index) on.push(`t.index([${q(b.name)}]);`);
  if (b.references && refChanged) {
    const r = b.references;
    on.push(`t.foreign(${q(b.name)}).references(${q(r.column)}).inTable(${q(r.table)}).onDelete(${q(r.onDelete)});`);
  }
  if (on.length) lines.push(...alterTable(table, on));
  return lines;
}

function describeAlter(a: DbColumn, b: DbColumn): string {
  const parts: string[] = [];
  if (describeType(a) !== describeType(b)) parts.push(`${describeType(a)} → ${describeType(b)}`);
  if (a.nullable !== b.nullable) parts.push(b.nullable ? 'null allowed' : 'NOT NULL');
  if (!sameValue(a.default, b.default)) parts.push(b.default === undefined ? 'no default' : `default ${JSON.stringify(b.default)}`);
  if (a.unique !== b.unique) parts.push(b.unique ? 'unique' : 'not unique');
  if (a.index !== b.index) parts.push(b.index ? 'indexed' : 'not indexed');
  if (!sameValue(a.references, b.references))
    parts.push(b.references ? `references ${b.references.table} on delete ${b.references.onDelete}` : 'no foreign key');
  return parts.join(', ');
}

function alterStep(table: string, a: DbColumn, b: DbColumn, fill: { value: unknown } | undefined, destructive: string | undefined): Step {
  // Undoing "NULL allowed": NULLs written since become the old default, when there is one.
  const downFill = b.nullable && !a.nullable && a.default !== undefined ? { value: a.default } : undefined;
  return {
    change: `alter column ${table}.${b.name} (${describeAlter(a, b)})${destructive ? ' (destructive)' : ''}`,
    slug: `alter_${table}_${b.name}`,
    up: [
      ...(destructive
        ? [`  // Destructive (written with --allow-destructive): ${destructive}; values that do not fit are lost or rejected.`]
        : []),
      ...alterLines(table, a, b, fill),
    ],
    down: alterLines(table, b, a, downFill),
    runtime: columnsRuntime([a, b]),
  };
}

function uniquesStep(table: string, a: string[][], b: string[][]): Step | undefined {
  const key = (u: string[]) => JSON.stringify(u);
  const drop = a.filter((u) => !b.some((v) => key(v) === key(u)));
  const add = b.filter((u) => !a.some((v) => key(v) === key(u)));
  if (!drop.length && !add.length) return undefined;
  const lines = (off: string[][], on: string[][]) =>
    alterTable(table, [...off.map((u) => `t.dropUnique(${q(u)});`), ...on.map((u) => `t.unique(${q(u)});`)]);
  return { change: `change the unique constraints of ${table}`, slug: `alter_${table}`, up: lines(drop, add), down: lines(add, drop) };
}

const describeIndex = (table: string, i: DbIndex) =>
  `${i.search ? 'search index' : i.folded ? 'case-insensitive unique index' : i.unique ? 'unique index' : 'index'} ${i.name} on ${table} (${i.columns.join(', ')})${i.whereNull ? ` where ${i.whereNull} is null` : ''}`;

/** The lines creating index `i` of `table`, and the runtime functions they call. */
function createIndexLines(table: string, i: DbIndex): { lines: string[]; runtime: string[] } {
  if (i.folded) return { lines: [`  ${createFoldedUniqueStatement(table, i)}`], runtime: [CREATE_FOLDED_UNIQUE] };
  return i.search
    ? { lines: [`  ${createSearchIndexStatement(table, i)}`], runtime: [CREATE_SEARCH_INDEX] }
    : { lines: alterTable(table, [indexStatement(i)]), runtime: [] };
}

/** The lines dropping index `i` of `table`, and the runtime functions they call. */
function dropIndexLines(table: string, i: DbIndex): { lines: string[]; runtime: string[] } {
  if (i.folded) return { lines: [`  ${dropFoldedUniqueStatement(table, i)}`], runtime: [DROP_FOLDED_UNIQUE] };
  return i.search
    ? { lines: [`  ${dropSearchIndexStatement(table, i)}`], runtime: [DROP_SEARCH_INDEX] }
    : { lines: alterTable(table, [dropIndexStatement(i)]), runtime: [] };
}

function addIndexStep(table: string, i: DbIndex): Step {
  const [on, off] = [createIndexLines(table, i), dropIndexLines(table, i)];
  return {
    change: `add ${describeIndex(table, i)}`,
    slug: `${table}_${i.columns.join('_')}${i.search ? '_search' : ''}`,
    up: on.lines,
    down: off.lines,
    runtime: [...on.runtime, ...off.runtime],
  };
}

function dropIndexStep(table: string, i: DbIndex): Step {
  const [on, off] = [createIndexLines(table, i), dropIndexLines(table, i)];
  return {
    change: `drop ${describeIndex(table, i)}`,
    slug: `remove_${i.name}`,
    up: off.lines,
    down: on.lines,
    runtime: [...off.runtime, ...on.runtime],
  };
}

/**
 * The composite indexes of `was` that `t` no longer has, and the ones it gains, matched by name: an
 * index whose columns, uniqueness or predicate change is dropped and created again.
 */
function indexSteps(table: string, was: DbIndex[], now: DbIndex[]): { drops: Step[]; adds: Step[] } {
  const same = (a: DbIndex, b: DbIndex) =>
    a.name === b.name &&
    a.unique === b.unique &&
    sameValue(a.columns, b.columns) &&
    a.whereNull === b.whereNull &&
    !a.search === !b.search &&
    !a.folded === !b.folded;
  return {
    drops: was.filter((a) => !now.some((b) => same(a, b))).map((a) => dropIndexStep(table, a)),
    adds: now.filter((b) => !was.some((a) => same(a, b))).map((b) => addIndexStep(table, b)),
  };
}

/* ------------------------------------------------------------------- plan */

interface Origin {
  /** Where the resource or relation that owns the table is written. */
  source: SourceRef;
  owner: string;
  /** Column → the field behind it. */
  fields: Map<string, Field>;
}

function originsOf(model: ServiceModel): Map<string, Origin> {
  const out = new Map<string, Origin>();
  for (const r of model.resources) {
    out.set(r.table, {
      source: { file: r.pk.source.file, path: ['fields'] },
      owner: `resource ${r.model}`,
      fields: new Map(r.fields.map((f) => [f.column, f])),
    });
    for (const m of r.m2m)
      out.set(m.joinTable, { source: m.source, owner: `many-to-many field ${m.name} of ${r.model}`, fields: new Map() });
  }
  return out;
}

/** A `--default` value as the column stores it. */
function parseDefault(key: string, raw: string, c: DbColumn): unknown {
  const fail = (kind: string) =>
    new MigrationOptionError(`--default ${key}=${raw}: ${c.name} is ${describeType(c)}, the value must be ${kind}`);
  switch (c.type) {
    case 'integer':
    case 'bigInteger':
      if (!/^-?\d+$/.test(raw)) throw fail('an integer');
      return Number(raw);
    case 'double':
      if (raw.trim() === '' || !Number.isFinite(Number(raw))) throw fail('a number');
      return Number(raw);
    case 'decimal':
      if (!/^-?\d+(\.\d+)?$/.test(raw)) throw fail('a decimal number such as 12.50');
      return raw;
    case 'boolean':
      if (!['true', 'false', '1', '0'].includes(raw)) throw fail('true or false');
      return raw === 'true' || raw === '1';
    case 'json':
      try {
        return JSON.stringify(JSON.parse(raw));
      } catch {
        throw fail('JSON');
      }
    case 'list': {
      let items: unknown;
      try {
        items = JSON.parse(raw);
      } catch {
        throw fail('a JSON list such as ["a","b"]');
      }
      if (!Array.isArray(items)) throw fail('a JSON list such as ["a","b"]');
      return items;
    }
    default:
      return raw;
  }
}

/** The snapshot's first migration: every table created. */
export function initialPlan(schema: DbSchema): MigrationPlan {
  const steps = schema.tables.map(createTableStep);
  return { existing: [], next: toMigration(INITIAL_MIGRATION, steps), names: [INITIAL_MIGRATION] };
}

function toMigration(name: string, steps: Step[]): NewMigration {
  const irreversible = steps.flatMap((s) => (Array.isArray(s.down) ? [] : [s.down.irreversible]));
  const down = irreversible.length
    ? [
        `  throw new Error(${q(`migration ${name} cannot be reversed: ${irreversible.join('; ')}; restore the database from a backup instead`)});`,
      ]
    : [...steps].reverse().flatMap((s) => s.down as string[]);
  const runtime = [...new Set(steps.flatMap((s) => s.runtime ?? []))];
  return { name, changes: steps.map((s) => s.change), up: steps.flatMap((s) => s.up), down, runtime };
}

/** `0002_articles_rating_comments`: the steps' slugs, shortened like Django's (`..._and_more`). */
function migrationName(number: number, steps: Step[]): string {
  const parts: string[] = [];
  let length = 0;
  for (const s of steps) {
    if (parts.length && length + s.slug.length > 40) {
      parts.push('and_more');
      break;
    }
    parts.push(s.slug);
    length += s.slug.length + 1;
  }
  const slug = parts
    .join('_')
    .replace(/[^a-z0-9_]+/gi, '_')
    .toLowerCase()
    .slice(0, 60)
    .replace(/_+$/, '');
  return `${String(number).padStart(4, '0')}_${slug || 'auto'}`;
}

/**
 * The migration plan: the committed migrations and, when the model's schema differs from the
 * snapshot, the next one. Throws a SpecError listing every step that needs the user's say
 * (destructive steps without `allowDestructive`, NOT NULL columns without a value for existing rows).
 */
export function planMigrations(model: ServiceModel, schema: DbSchema, history: MigrationHistory, options: PlanOptions): MigrationPlan {
  const old = history.snapshot;
  if (!old) return initialPlan(schema);
  const origins = originsOf(model);
  const after = new Map(schema.tables.map((t) => [t.name, t]));
  const planner: Planner = {
    history,
    options,
    origins,
    fills: oneOffValues(options.defaults ?? {}, after, origins),
    problems: [],
    destructive: [],
  };
  const before = new Map(old.tables.map((t) => [t.name, t]));
  const creates = schema.tables.filter((t) => !before.has(t.name)).map(createTableStep);
  const changes = schema.tables.flatMap((t) => {
    const was = before.get(t.name);
    return was ? changedTableSteps(planner, was, t) : [];
  });
  const drops = droppedTableSteps(planner, old, after);
  const problems = [...planner.problems, ...planner.destructive];
  if (problems.length) throw new SpecError(problems);
  return withNextMigration(history.migrations, [...creates, ...changes, ...drops]);
}

/** What the planning steps share: where each table comes from, the one-off values, and the problems found so far. */
interface Planner {
  history: MigrationHistory;
  options: PlanOptions;
  origins: Map<string, Origin>;
  /** One-off values for existing rows, by `table.column`. */
  fills: Map<string, { value: unknown }>;
  /** Steps that need a value or cannot be written, in the order found. */
  problems: Diagnostic[];
  /** Steps that lose data and were not allowed; reported after the others. */
  destructive: Diagnostic[];
}

const DESTRUCTIVE_HINT = 'run svcgen build with --allow-destructive to write it';

/** The `--default` values, `table.field` or `table.column`, checked against the model's tables and parsed as their columns store them. */
function oneOffValues(
  defaults: Record<string, string>,
  tables: Map<string, DbTable>,
  origins: Map<string, Origin>,
): Map<string, { value: unknown }> {
  const fills = new Map<string, { value: unknown }>();
  for (const [key, raw] of Object.entries(defaults)) {
    const [table, name] = key.split('.', 2);
    const t = tables.get(table);
    if (!t || !name)
      throw new MigrationOptionError(
        `--default ${key}=${raw}: ${t ? 'give it as TABLE.FIELD=VALUE' : `no table "${table}" in the specs (tables: ${[...tables.keys()].join(', ')})`}`,
      );
    const column =
      origins.get(table)?.fields.get(name)?.column ??
      [...(origins.get(table)?.fields.values() ?? [])].find((f) => f.name === name)?.column ??
      name;
    const c = t.columns.find((x) => x.name === column);
    if (!c) throw new MigrationOptionError(`--default ${key}=${raw}: ${table} has no field "${name}"`);
    fills.set(`${table}.${c.name}`, { value: parseDefault(key, raw, c) });
  }
  return fills;
}

/** The one-off value for a column's existing rows. A value for a column that needs none is ignored: the flag may stay in a script after its one use. */
function fillFor(planner: Planner, table: string, c: DbColumn): { value: unknown } | undefined {
  return planner.fills.get(`${table}.${c.name}`);
}

function fieldOf(planner: Planner, table: string, column: string): Field | undefined {
  return planner.origins.get(table)?.fields.get(column);
}

/** Where a column (its field) or a table (its resource or relation) is written in the specs. */
function sourceOf(planner: Planner, table: string, column?: string): SourceRef | undefined {
  return (column !== undefined ? fieldOf(planner, table, column)?.source : undefined) ?? planner.origins.get(table)?.source;
}

/** Reports a step that loses data, at the spec that asks for it, or at the table in the snapshot when no spec is left. */
function flagDestructive(planner: Planner, table: string, column: string | undefined, message: string): void {
  const { history, options } = planner;
  const source = sourceOf(planner, table, column);
  planner.destructive.push(
    source
      ? options.at(source, message)
      : diagnosticIn(history.snapshotFile, message, history.snapshotText, new RegExp(`^\\s{6}"name": ${JSON.stringify(table)},?$`)),
  );
}

function primaryKeyProblem(planner: Planner, table: string, c: DbColumn): Diagnostic {
  const message =
    `the primary key of ${table} changes (${c.name}); generated migrations cannot change the primary key of an existing table: ` +
    'keep the old primary key, or give the resource a new table name (the old table is dropped with --allow-destructive)';
  const source = sourceOf(planner, table, c.name);
  return source ? planner.options.at(source, message) : diagnosticIn(planner.history.snapshotFile, message);
}

/** The steps that turn table `was` into `t` (same name): renames, alters, new columns, dropped columns, unique constraints, indexes. */
function changedTableSteps(planner: Planner, was: DbTable, t: DbTable): Step[] {
  const renames: Step[] = [];
  const adds: Step[] = [];
  const alters: Step[] = [];
  const matched = new Set<string>();
  for (const c of t.columns) {
    const prev = previousColumn(planner, was, t, c);
    if (prev === false) continue;
    if (!prev) {
      const add = addedColumnStep(planner, t.name, c);
      if (add) adds.push(add);
      continue;
    }
    if (prev.name !== c.name) renames.push(renameStep(t.name, prev, c));
    matched.add(prev.name);
    const alter = changedColumnStep(planner, t.name, prev, c);
    if (alter) alters.push(alter);
  }
  const removes = droppedColumnSteps(planner, was, t, matched);
  const uniques = uniquesStep(t.name, was.uniques ?? [], t.uniques);
  // A searched column that is renamed keeps its search index, renamed after it (not built again).
  const searchRenames = searchIndexRenames(t, was.indexes ?? [], t.indexes ?? [], renames);
  const renamedAway = new Set(searchRenames.map((r) => r.from.name));
  const renamedTo = new Set(searchRenames.map((r) => r.to.name));
  // Old indexes go before their columns change or go; new ones come once every column is there.
  const indexes = indexSteps(
    t.name,
    (was.indexes ?? []).filter((i) => !renamedAway.has(i.name)),
    (t.indexes ?? []).filter((i) => !renamedTo.has(i.name)),
  );
  return [
    ...indexes.drops,
    ...renames,
    ...searchRenames.map((r) => r.step),
    ...alters,
    ...adds,
    ...removes,
    ...(uniques ? [uniques] : []),
    ...indexes.adds,
  ];
}

/**
 * The search indexes of `was` whose column `renames` renames and that `now` has on the new name:
 * each is renamed (`renameSearchIndex`), where dropping it and creating it again would read every row.
 */
function searchIndexRenames(t: DbTable, was: DbIndex[], now: DbIndex[], renames: Step[]): { from: DbIndex; to: DbIndex; step: Step }[] {
  const out: { from: DbIndex; to: DbIndex; step: Step }[] = [];
  for (const step of renames) {
    const columns = step.renamed;
    if (!columns) continue;
    const from = was.find((i) => i.search && i.columns[0] === columns.from);
    const to = now.find((i) => i.search && i.columns[0] === columns.to);
    if (!from || !to || from.name === to.name) continue;
    const line = (a: DbIndex, b: DbIndex) => [`  await ${RENAME_SEARCH_INDEX}(knex, ${q(t.name)}, ${q(a.name)}, ${q(b.name)});`];
    out.push({
      from,
      to,
      step: {
        change: `rename search index ${from.name} to ${to.name}`,
        slug: `rename_${from.name}`,
        up: line(from, to),
        down: line(to, from),
        runtime: [RENAME_SEARCH_INDEX],
      },
    });
  }
  return out;
}

/**
 * The snapshot's column that `c` continues: the one of the same name, or the one its field is
 * `renamed_from` (unless that name is still a column of the table). Undefined for a new column;
 * false when `renamed_from` names no column (reported).
 */
function previousColumn(planner: Planner, was: DbTable, t: DbTable, c: DbColumn): DbColumn | undefined | false {
  const same = was.columns.find((x) => x.name === c.name);
  const field = fieldOf(planner, t.name, c.name);
  if (same || !field?.renamedFrom) return same;
  const fromColumn = field.type === 'foreign_key' ? `${field.renamedFrom}_id` : field.renamedFrom;
  const from = was.columns.find((x) => x.name === fromColumn);
  if (!from) {
    planner.problems.push(
      planner.options.at(
        { file: field.source.file, path: [...field.source.path, 'renamed_from'] },
        `renamed_from: ${field.renamedFrom}, but ${t.name} has no column ${fromColumn} in the last generated schema (${planner.history.snapshotFile}); ` +
          `fix the old name, or remove renamed_from to add ${c.name} as a new column`,
      ),
    );
    return false;
  }
  return t.columns.some((x) => x.name === from.name) ? undefined : from;
}

/** A new column; undefined (and a problem) for a primary key, or a NOT NULL column without a value for the existing rows. */
function addedColumnStep(planner: Planner, table: string, c: DbColumn): Step | undefined {
  if (c.primary) {
    planner.problems.push(primaryKeyProblem(planner, table, c));
    return undefined;
  }
  let fill: { value: unknown } | undefined;
  if (!c.nullable && c.default === undefined) {
    fill = fillFor(planner, table, c);
    if (!fill) {
      const name = fieldOf(planner, table, c.name)?.name ?? c.name;
      planner.problems.push(
        planner.options.at(
          sourceOf(planner, table, c.name)!,
          `new field ${name} is NOT NULL without a default, and the existing rows of ${table} need a value: ` +
            `add "default: ..." to the field, or "null: true", or give a one-off value for existing rows with svcgen build --default ${table}.${name}=VALUE`,
        ),
      );
      return undefined;
    }
  }
  return addColumnStep(table, c, fill);
}

/**
 * The change of column `prev` into `c` (after any rename); undefined when nothing changed, or (with a
 * problem) when the primary key changes or a column becomes NOT NULL without a value for its NULLs.
 */
function changedColumnStep(planner: Planner, table: string, prev: DbColumn, c: DbColumn): Step | undefined {
  const a = { ...prev, name: c.name };
  if (a.primary !== c.primary || (c.primary && definitionChanged(a, c))) {
    planner.problems.push(primaryKeyProblem(planner, table, c));
    return undefined;
  }
  if (!definitionChanged(a, c) && a.unique === c.unique && a.index === c.index && sameValue(a.references, c.references)) return undefined;
  const narrows = definitionChanged(a, c) ? narrowing(a, c) : undefined;
  let fill: { value: unknown } | undefined;
  if (a.nullable && !c.nullable) {
    fill = fillFor(planner, table, c) ?? (c.default !== undefined ? { value: c.default } : undefined);
    if (!fill) {
      const name = fieldOf(planner, table, c.name)?.name ?? c.name;
      planner.problems.push(
        planner.options.at(
          sourceOf(planner, table, c.name)!,
          `field ${name} becomes NOT NULL, and existing rows of ${table} may hold NULL: add "default: ..." to the field ` +
            `(NULLs become the default), or give a one-off value with svcgen build --default ${table}.${name}=VALUE`,
        ),
      );
      return undefined;
    }
  }
  if (!narrows) return alterStep(table, a, c, fill, undefined);
  if (!planner.options.allowDestructive) {
    flagDestructive(
      planner,
      table,
      c.name,
      `changing ${table}.${c.name} (${narrows}) can lose data; ${DESTRUCTIVE_HINT}, or keep the old definition`,
    );
  }
  return alterStep(table, a, c, fill, `${table}.${c.name} ${narrows}`);
}

/** The columns of `was` that `t` no longer has (neither by name nor as the origin of a rename). */
function droppedColumnSteps(planner: Planner, was: DbTable, t: DbTable, matched: Set<string>): Step[] {
  const steps: Step[] = [];
  for (const c of was.columns) {
    if (matched.has(c.name) || t.columns.some((x) => x.name === c.name)) continue;
    if (c.primary) {
      planner.problems.push(primaryKeyProblem(planner, t.name, c));
      continue;
    }
    if (!planner.options.allowDestructive) {
      const fieldName = c.references ? c.name.replace(/_id$/, '') : c.name;
      flagDestructive(
        planner,
        t.name,
        undefined,
        `removing field ${fieldName} drops column ${t.name}.${c.name} and its data; ${DESTRUCTIVE_HINT}, ` +
          `or put the field back (to rename it instead, add renamed_from: ${fieldName} to the field with the new name)`,
      );
    }
    steps.push(dropColumnStep(t.name, c));
  }
  return steps;
}

/** The snapshot's tables the model no longer has, dropped in reverse order of creation. */
function droppedTableSteps(planner: Planner, old: Snapshot, after: Map<string, DbTable>): Step[] {
  const steps: Step[] = [];
  for (const t of [...old.tables].reverse()) {
    if (after.has(t.name)) continue;
    if (!planner.options.allowDestructive) {
      // A relation of a resource that is still there points at that resource; a removed resource only lives in the snapshot.
      const owner = [...planner.origins.keys()].find(
        (name) => t.name.startsWith(`${name}_`) && t.columns.some((c) => c.references?.table === name),
      );
      const what = owner
        ? `removing a many-to-many field of ${owner} drops its join table ${t.name}`
        : `removing the resource of table ${t.name} drops the table`;
      flagDestructive(planner, owner ?? t.name, undefined, `${what} and its rows; ${DESTRUCTIVE_HINT}, or restore the spec`);
    }
    steps.push(dropTableStep(t));
  }
  return steps;
}

/** The committed migrations and, when there are steps, the next numbered one. */
function withNextMigration(existing: MigrationHistory['migrations'], steps: Step[]): MigrationPlan {
  const names = existing.map((m) => m.name);
  if (!steps.length) return { existing, names };
  const last = Math.max(0, ...names.map((n) => Number(n.slice(0, 4))));
  const next = toMigration(migrationName(last + 1, steps), steps);
  return { existing, next, names: [...names, next.name] };
}
