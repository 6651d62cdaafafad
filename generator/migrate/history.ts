/**
 * The committed migration history of an output folder: the snapshot of the database schema
 * (`migrations/schema.json`) with the migrations it lists, read once and checked against the
 * migrations on disk, and the snapshot's bytes as a build writes them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DbSchema, DbTable } from './db-schema';
import { SpecError, type Diagnostic } from '../load/diagnostics';
import { displayPath } from '../load/load';

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

export function diagnosticIn(file: string, message: string, text?: string, needle?: RegExp): Diagnostic {
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
