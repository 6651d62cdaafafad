/**
 * Views of the migration files: the next migration the plan stage decided on, and the index of
 * every migration in the order they apply.
 */
import { INITIAL_MIGRATION } from '../migrate/history';
import type { NewMigration } from '../migrate/steps';
import { header, runtimeFrom, type RenderContext } from './context';
import { andList } from './english';
import { Imports } from './imports';

/** The view of `templates/migration.ts.hbs`. */
export function migrationView(m: NewMigration, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 1));
  imports.runtimeType('Knex');
  for (const name of m.runtime) imports.runtime(name);
  const sentence = m.changes.join('; ');
  return {
    header: header(`${ctx.specsName}/`),
    imports: imports.print(),
    description:
      m.name === INITIAL_MIGRATION
        ? `Creates ${andList(m.changes.map((c) => c.replace(/^create table /, '')))}.`
        : `${sentence[0].toUpperCase()}${sentence.slice(1)}.`,
    up: m.up,
    down: m.down,
  };
}

/** The view of `templates/migrations-index.ts.hbs`. */
export function migrationsIndexView(names: string[], ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 1));
  imports.runtimeType('Migration');
  const migrations = names.map((name, index) => ({ name, module: imports.namespace(`./${name}`, `m${index}`) }));
  return {
    header: header(`${ctx.specsName}/`),
    migrations,
    imports: imports.print(),
  };
}
