/**
 * Schema migrations from spec changes, like Django's makemigrations: the committed snapshot of the
 * database schema (`migrations/schema.json` in the output folder) is compared with the schema the
 * current model implies, and the difference becomes the next numbered Knex migration. Committed
 * migrations are never rewritten. Pure: the history is read once by `readMigrationHistory`
 * (history.ts), and `planMigrations` turns (history, model) into steps or diagnostics; this module
 * diffs the two schemas and decides the steps, whose code steps.ts writes.
 */
import { RENAME_SEARCH_INDEX, type DbColumn, type DbIndex, type DbSchema, type DbTable } from './db-schema';
import { SpecError, type Diagnostic } from '../load/diagnostics';
import type { Field, ServiceModel, SourceRef } from '../model/model';
import { literal } from '../model/names';
import { INITIAL_MIGRATION, type MigrationHistory, type Snapshot, diagnosticIn } from './history';
import {
  type NewMigration,
  type Step,
  addColumnStep,
  alterStep,
  createTableStep,
  definitionChanged,
  describeType,
  dropColumnStep,
  dropTableStep,
  indexSteps,
  migrationName,
  renameStep,
  sameValue,
  toMigration,
  uniquesStep,
} from './steps';

const q = literal;

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
