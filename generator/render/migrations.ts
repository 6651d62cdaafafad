/**
 * Views of the migration files: the next migration the plan stage decided on, and the index of
 * every migration in the order they apply.
 */
import { INITIAL_MIGRATION, type NewMigration } from '../migrations';
import { header, runtimeFrom, type RenderContext } from './context';

/** The view of `templates/migration.ts.hbs`. */
export function migrationView(m: NewMigration, ctx: RenderContext) {
  const sentence = m.changes.join('; ');
  return {
    header: header(`${ctx.specsName}/`),
    runtime: runtimeFrom(ctx, 1),
    description:
      m.name === INITIAL_MIGRATION
        ? `Creates ${m.changes.map((c) => c.replace(/^create table /, '')).join(', ')}.`
        : `${sentence[0].toUpperCase()}${sentence.slice(1)}.`,
    up: m.up,
    down: m.down,
  };
}

/** The view of `templates/migrations-index.ts.hbs`. */
export function migrationsIndexView(names: string[], ctx: RenderContext) {
  return {
    header: header(`${ctx.specsName}/`),
    runtime: runtimeFrom(ctx, 1),
    migrations: names.map((name, index) => ({ name, index })),
  };
}
