/**
 * Stage 4: render every output file from the model. Pure: model in, file map out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Handlebars from 'handlebars';
import { accessMatrix, type AccessMatrix } from '../access/matrix';
import { dbSchemaOf, type DbSchema } from '../migrate/db-schema';
import { snapshotJson } from '../migrate/history';
import { initialPlan, type MigrationPlan } from '../migrate/migrations';
import { PACKAGE_ROOT } from '../package-root';
import type { ServiceModel } from '../model/model';
import { accessTestUser, accessTestView } from './access-test';
import { clientView } from './client';
import type { RenderContext } from './context';
import { endpointsView } from './endpoints';
import { filtersView } from './filters';
import { migrationsIndexView, migrationView } from './migrations';
import { queriesView } from './queries';
import { routesView } from './routes';
import { schemasView } from './schemas';
import { appView, authView, mainView, settingsView } from './service';

export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');
const PARTIALS_DIR = path.join(TEMPLATES_DIR, 'partials');

const hb = Handlebars.create();
// Partials are named by their path below partials/, without `.hbs`: `route`, `operations/create`.
for (const file of fs.readdirSync(PARTIALS_DIR, { recursive: true, encoding: 'utf8' }).sort()) {
  if (!file.endsWith('.hbs')) continue;
  hb.registerPartial(file.slice(0, -'.hbs'.length).split(path.sep).join('/'), fs.readFileSync(path.join(PARTIALS_DIR, file), 'utf8'));
}

const cache = new Map<string, Handlebars.TemplateDelegate>();

/** Templates compile once per process; `noEscape` because HTML escaping is wrong for code, `strict` so a missing field throws. */
function template(name: string): Handlebars.TemplateDelegate {
  let t = cache.get(name);
  if (!t) {
    t = hb.compile(fs.readFileSync(path.join(TEMPLATES_DIR, `${name}.hbs`), 'utf8'), { noEscape: true, strict: true });
    cache.set(name, t);
  }
  return t;
}

/** strict mode also rejects a falsy lookup of a missing key inside #if, so views carry every key. */
function render(name: string, view: object): string {
  return template(name)(view);
}

export interface RenderedFiles {
  /** Output path (relative, forward slashes) → content. */
  files: Map<string, string>;
  /** Committed migrations: written back byte for byte, never formatted or re-rendered. */
  verbatim: Map<string, string>;
}

/** What the earlier stages made of the model that the output prints; rendering reads them, never remakes them. */
export interface StageResults {
  /** The database schema the model implies (migrate/db-schema.ts): the snapshot `migrations/schema.json`. */
  schema: DbSchema;
  /** The committed migrations and the next one (see `planMigrations`). */
  migrations: MigrationPlan;
  /** Who may call each operation (access/matrix.ts): the generated access test's checks. */
  access: AccessMatrix;
}

/**
 * The earlier stages' results of a first build, made from the model alone: the schema, one
 * `0001_initial` creating every table, the access matrix. For renders outside a build (the check
 * of generated names, tests).
 */
export function firstBuildResults(model: ServiceModel): StageResults {
  const schema = dbSchemaOf(model);
  return { schema, migrations: initialPlan(schema), access: accessMatrix(model, 'service.yaml') };
}

export function renderService(model: ServiceModel, ctx: RenderContext, earlier: StageResults): RenderedFiles {
  const files = new Map<string, string>();
  for (const r of model.resources) {
    const dir = `resources/${r.moduleName}`;
    files.set(`${dir}/schemas.ts`, render('resource/schemas.ts', schemasView(r, ctx)));
    files.set(`${dir}/queries.ts`, render('resource/queries.ts', queriesView(r, model, ctx)));
    files.set(`${dir}/routes.ts`, render('resource/routes.ts', routesView(r, model, ctx)));
    if (r.filters) files.set(`${dir}/filters.ts`, render('resource/filters.ts', filtersView(r, ctx)));
  }
  files.set('settings.ts', render('settings.ts', settingsView(model, ctx)));
  files.set('auth.ts', render('auth.ts', authView(model, ctx)));
  files.set('app.ts', render('app.ts', appView(model, ctx)));
  files.set('endpoints.ts', render('endpoints.ts', endpointsView(model, ctx)));
  files.set('main.ts', render('main.ts', mainView(model, ctx)));
  files.set('client.ts', render('client.ts', clientView(model, ctx)));
  if (accessTestUser(model)) files.set('access-test.ts', render('access-test.ts', accessTestView(model, earlier.access, ctx)));
  const { schema, migrations: plan } = earlier;
  const verbatim = new Map(plan.existing.map((m) => [`migrations/${m.name}.ts`, m.text]));
  if (plan.next) files.set(`migrations/${plan.next.name}.ts`, render('migration.ts', migrationView(plan.next, ctx)));
  files.set('migrations/index.ts', render('migrations-index.ts', migrationsIndexView(plan.names, ctx)));
  files.set('migrations/schema.json', snapshotJson(schema, plan.names));
  return { files, verbatim };
}
