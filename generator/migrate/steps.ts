/**
 * The steps of a migration and the Knex code each writes: create or drop a table, add, drop, rename
 * or alter a column, change unique constraints and indexes; each with its `up` and `down` lines (or
 * why it cannot be reversed) and a slug for the migration's name. `toMigration` writes a migration
 * from its steps. What the steps are is decided by the plan (migrations.ts).
 */
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
  indexStatement,
  type DbColumn,
  type DbIndex,
  type DbTable,
} from './db-schema';
import { literal } from '../model/names';

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

export const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export function definitionChanged(a: DbColumn, b: DbColumn): boolean {
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

export function describeType(c: DbColumn): string {
  if (c.type === 'list') return `list of ${c.items}`;
  if (c.length !== undefined) return `${c.type}(${c.length})`;
  if (c.precision !== undefined) return `${c.type}(${c.precision},${c.scale ?? 0})`;
  return c.type;
}

export interface Step {
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

export function createTableStep(t: DbTable): Step {
  return {
    change: `create table ${t.name}`,
    slug: t.name,
    up: createTableStatements(t),
    down: [dropTableStatement(t)],
    runtime: createTableRuntime(t),
  };
}

export function dropTableStep(t: DbTable): Step {
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

export function addColumnStep(table: string, c: DbColumn, fill: { value: unknown } | undefined): Step {
  return {
    change: `add column ${table}.${c.name}`,
    slug: `${table}_${c.name}`,
    up: addColumnLines(table, c, fill),
    down: alterTable(table, [`t.dropColumn(${q(c.name)});`]),
    runtime: columnsRuntime([c]),
  };
}

export function dropColumnStep(table: string, c: DbColumn): Step {
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

export function renameStep(table: string, from: DbColumn, to: DbColumn): Step {
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

export function alterStep(
  table: string,
  a: DbColumn,
  b: DbColumn,
  fill: { value: unknown } | undefined,
  destructive: string | undefined,
): Step {
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

export function uniquesStep(table: string, a: string[][], b: string[][]): Step | undefined {
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
export function indexSteps(table: string, was: DbIndex[], now: DbIndex[]): { drops: Step[]; adds: Step[] } {
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

export function toMigration(name: string, steps: Step[]): NewMigration {
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
export function migrationName(number: number, steps: Step[]): string {
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
