/**
 * `node main.js seed FILE...`: rows loaded from YAML or JSON fixture files, each file a map of
 * resource (its route base, `articles`) → list of rows:
 *
 * ```yaml
 * categories:
 *   - {id: 1, name: News}
 * articles:
 *   - {title: Hello, content: First post, category: 1, author: 1, is_published: true}
 * ```
 *
 * Each row is validated through the resource's create schema (what `POST /{base}/` accepts, with
 * its defaults and conversions: a password is hashed, auto_now fields are set), plus the model's
 * other column fields a create body cannot carry (the primary key, a foreign key a hook sets, flags):
 * those are checked to be fields of the model and converted as the create would. Every problem of
 * every file is reported, `file: resource[i].field: message`, and then nothing is written; else
 * all rows are inserted in one transaction, in file order, and the count per resource printed; a
 * row the database refuses (a foreign key to nothing, a duplicate) rolls all of them back. Hooks do
 * not run, and many-to-many links are not loaded. Explicit primary keys move PostgreSQL's sequence past them.
 *
 * YAML is read by the `yaml` package, which the runtime does not declare (a production install
 * holds no YAML parser; npm installs even an optional peer there once the tree has it): it is
 * installed wherever svcgen is (a development install), and a YAML fixture without it is reported
 * with what to do; JSON fixtures need nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import { hashPassword } from '../auth/password';
import { toDb } from '../core/convert';
import { dialectOf, type Db } from '../db/connection';
import { toEntries } from '../validation/validate';

/** How a column a create body cannot carry is written. */
export type SeedColumnKind = 'value' | 'password' | 'datetime' | 'json';

/** One resource as `seed` writes it: the generated create schema and values, and the other columns. */
export interface SeedResource {
  table: string;
  pk: string;
  schema: z.ZodType;
  /** The create values of a parsed body (a promise of them from services generated before 0.2). */
  values(data: any): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Model fields outside the create schema, by field name: their column and how to write it. */
  extras: Readonly<Record<string, { column: string; kind: SeedColumnKind }>>;
}

export interface SeedResult {
  /** Rows inserted per resource, in the order first seen. */
  inserted: Map<string, number>;
}

/** The files could not be read or a row is invalid: every problem, one per line; nothing was written. */
export class SeedError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'SeedError';
  }
}

function readFixture(file: string): unknown {
  const text = fs.readFileSync(file, 'utf8');
  return /\.json$/i.test(file) ? JSON.parse(text) : yamlParser()(text);
}

/** The `yaml` package's parse, loaded on the first YAML fixture (svcgen's, where it is installed). */
function yamlParser(): (text: string) => unknown {
  try {
    return (require('yaml') as typeof import('yaml')).parse;
  } catch {
    throw new Error(
      'YAML fixtures need the yaml package, installed with svcgen (npm install --save-dev yaml in a production image), or give the fixtures as JSON',
    );
  }
}

async function extraValue(kind: SeedColumnKind, value: unknown): Promise<unknown> {
  if (value === null || value === undefined) return value;
  if (kind === 'password') return hashPassword(String(value));
  if (kind === 'datetime') return toDb.dateTime(String(value));
  if (kind === 'json') return toDb.json(value);
  return value;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates every row of every file, then inserts them all in one transaction. */
export async function seed(db: Db, resources: Readonly<Record<string, SeedResource>>, files: readonly string[]): Promise<SeedResult> {
  const problems: string[] = [];
  const rows: { name: string; resource: SeedResource; values: Record<string, unknown> }[] = [];
  for (const file of files) {
    const at = path.basename(file);
    let data: unknown;
    try {
      data = readFixture(file);
    } catch (err) {
      problems.push(`${at}: cannot read: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
      continue;
    }
    if (!isRecord(data)) {
      problems.push(`${at}: expected a map of resource → list of rows`);
      continue;
    }
    for (const [name, list] of Object.entries(data)) {
      const resource = resources[name];
      if (!resource) {
        problems.push(`${at}: ${name}: not a resource of this service that can be created (${Object.keys(resources).join(', ')})`);
        continue;
      }
      if (!Array.isArray(list)) {
        problems.push(`${at}: ${name}: expected a list of rows`);
        continue;
      }
      for (const [i, row] of list.entries()) {
        const where = `${at}: ${name}[${i}]`;
        if (!isRecord(row)) {
          problems.push(`${where}: expected a map of field → value`);
          continue;
        }
        const body: Record<string, unknown> = {};
        const extra: Record<string, unknown> = {};
        const shape = (resource.schema as { shape?: Record<string, unknown> }).shape;
        for (const [key, value] of Object.entries(row)) {
          if (key in resource.extras) extra[key] = value;
          else if (shape && !(key in shape)) problems.push(`${where}.${key}: not a field of ${name}`);
          else body[key] = value;
        }
        const parsed = resource.schema.safeParse(body);
        if (!parsed.success) {
          for (const e of toEntries(parsed.error.issues, []))
            problems.push(`${where}${e.loc.length ? `.${e.loc.join('.')}` : ''}: ${e.msg}`);
          continue;
        }
        const values = await resource.values(parsed.data);
        for (const [field, value] of Object.entries(extra)) {
          const { column, kind } = resource.extras[field];
          values[column] = await extraValue(kind, value);
        }
        rows.push({ name, resource, values });
      }
    }
  }
  if (problems.length) throw new SeedError(problems);
  const inserted = new Map<string, number>();
  await db.transaction(async (trx) => {
    for (const { name, resource, values } of rows) {
      await trx(resource.table).insert(values);
      // A row with its key given: the next row without one gets a key after it.
      if (values[resource.pk] !== undefined) await dialectOf(trx).syncKeySequence(trx, resource.table, resource.pk);
      inserted.set(name, (inserted.get(name) ?? 0) + 1);
    }
  });
  return { inserted };
}
