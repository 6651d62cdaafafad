/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 */
import type { Knex } from 'knex';
import type { Db } from './db';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export function migrationSource(migrations: readonly Migration[]): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => [...migrations],
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: m.up, down: m.down }),
  };
}

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: migrationSource(migrations), tableName: 'svc_migrations' })) as [
    number,
    string[],
  ];
  return applied;
}

/** Reverts the last batch; returns the names reverted. */
export async function migrateRollback(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback({ migrationSource: migrationSource(migrations), tableName: 'svc_migrations' })) as [
    number,
    string[],
  ];
  return reverted;
}
