/**
 * Views of the service-level files: `settings.ts` (the specs' settings), `auth.ts` (the user a token
 * names), `app.ts` (the Express application with every route) and `main.ts` (the command line).
 */
import { isBuiltinException, SETTINGS, type SettingName } from '@svcgen/runtime/catalogue';
import type { Field, ServiceModel } from '../model/model';
import { camelCase, literal, str } from '../model/names';
import { header, hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { serves } from './queries';
import { readColumn } from './values';
import { conflictsLiteral } from './conflicts';

const list = (names: readonly string[]) => names.map((n) => str(n)).join(', ');

export function settingsView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  imports.runtimeType('Settings');
  imports.runtime('withSettingDefaults');
  // Only what the specs change: the runtime holds the spec language's defaults.
  const set = Object.entries(model.settings).filter(([name, value]) => value !== SETTINGS[name as SettingName].default);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    settings: set.map(([name, value]) => ({ name, value: literal(value) })),
    sqliteFile: str(model.sqliteFile),
    keysDir: str(model.auth.keysDir),
    imports: imports.print(),
  };
}

/** The flags every AuthUser carries, with their value when the user model has no such field. */
const USER_FLAGS: Record<string, string> = { is_active: 'true', is_staff: 'false', is_superuser: 'false' };

export function authView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  imports.runtimeType('AuthUser');
  imports.runtimeType('Db');
  const user = model.resources.find((r) => r.model === model.auth.userModel);
  if (user) imports.runtime('selectByKey');
  const fields = user?.fields.filter((f) => f.type !== 'password') ?? [];
  const userView = user
    ? {
        table: user.table,
        pk: user.pk.column,
        intKey: user.pk.type === 'integer' || user.pk.type === 'big_integer',
        columns: list(fields.map((f) => f.column)),
        fields: [
          ...fields.map((f) => ({ name: f.name, expr: readColumn(f, imports) })),
          ...Object.entries(USER_FLAGS)
            .filter(([name]) => !fields.some((f) => f.name === name))
            .map(([name, value]) => ({ name, expr: value })),
        ],
      }
    : undefined;
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    extraClaims: list(model.auth.extraClaims),
    user: userView,
    imports: imports.print(),
  };
}

export function appView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  for (const name of ['createApi', 'createServiceContext', 'loadSettings', 'TokenService']) imports.runtime(name);
  for (const name of ['Route', 'Service', 'ServiceOptions']) imports.runtimeType(name);
  const hooks = () => imports.namespace(hookModuleFrom(ctx, model.hooks!, 0), 'hooks');
  const handlers = model.exceptionHandlers.map((h) => {
    const exception = isBuiltinException(h.exception) ? imports.runtime(h.exception) : `${hooks()}.${h.exception}`;
    return `[${exception}, ${hooks()}.${h.handler}]`;
  });
  for (const name of ['EXTRA_CLAIMS', 'loadUser']) imports.value('./auth', name);
  imports.value('./endpoints', 'endpointRoutes');
  imports.value('./settings', 'DEFAULT_SETTINGS');
  const resources = model.resources.map((r) => ({
    routesFn: imports.value(`./resources/${r.moduleName}/routes`, `${camelCase(r.moduleName)}Routes`),
  }));
  // Each resource's queryset_request, by table: the rows other resources' paths may show a caller.
  const visibility = model.resources
    .filter((r) => r.querysetRequest && r.hooks)
    .map(
      (r) =>
        `${str(r.table)}: ${imports.namespace(hookModuleFrom(ctx, r.hooks!, 0), `${camelCase(r.moduleName)}Hooks`)}.${r.querysetRequest}`,
    );
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    title: model.title,
    titleLiteral: str(model.title),
    versionLiteral: str(model.version),
    descriptionLiteral: model.description ? str(model.description) : undefined,
    licenseLiteral: model.license ? literal(model.license) : undefined,
    contactLiteral: model.contact ? literal(model.contact) : undefined,
    tokenPathsLiteral: model.tokenPaths.length ? literal(model.tokenPaths) : undefined,
    basePath: model.basePath,
    exceptionHandlers: handlers.join(', '),
    conflicts: conflictsLiteral(model),
    visibility: visibility.length ? `{ ${visibility.join(', ')} }` : undefined,
    views: model.views ? `${hooks()}.${model.views}` : undefined,
    resources,
    imports: imports.print(),
  };
}

/** How `seed` writes a column a create body cannot carry (runtime/operations/seed.ts). */
function seedKind(f: Field): string {
  return f.type === 'password' ? 'password' : f.type === 'datetime' ? 'datetime' : f.type === 'json' ? 'json' : 'value';
}

/**
 * The resources `seed` loads fixtures into (those with a create operation), by route base: the
 * create schema and values of the generated create, and the model's other columns.
 */
function seedsExpr(model: ServiceModel, imports: Imports): string | undefined {
  const entries = model.resources
    .filter((r) => serves(r, 'create'))
    .map((r) => {
      const ns = `${camelCase(r.moduleName)}`;
      const schemas = imports.namespace(`./resources/${r.moduleName}/schemas`, `${ns}Schemas`);
      const queries = imports.namespace(`./resources/${r.moduleName}/queries`, `${ns}Queries`);
      const inSchema = new Set(r.schemas.in.fields.map((f) => f.name));
      const extras = r.fields
        .filter((f) => !inSchema.has(f.name) && !f.autoNow && !f.autoNowAdd)
        .map((f) => `${literal(f.name)}: { column: ${literal(f.column)}, kind: ${literal(seedKind(f))} }`);
      return `${literal(r.base)}: { table: ${literal(r.table)}, pk: ${literal(r.pk.column)}, schema: ${schemas}.${r.schemas.in.name}, values: ${queries}.createValues, extras: { ${extras.join(', ')} } }`;
    });
  return entries.length ? `{ ${entries.join(', ')} }` : undefined;
}

/** The fields `createuser` writes: a user model without them gets no createuser command. */
const CREATEUSER_FIELDS = ['username', 'email', 'password', 'is_active', 'is_staff', 'is_superuser'];

/** `main.ts`: the service's own parts, handed to the runtime's command line (`runMain`). */
export function mainView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  imports.runtime('runMain');
  imports.value('./app', 'createService');
  imports.value('./migrations', 'migrations');
  for (const name of ['DEFAULT_SETTINGS', 'DEFAULT_SQLITE_FILE', 'DEV_KEYS_DIR']) imports.value('./settings', name);
  const user = model.resources.find((r) => r.model === model.auth.userModel);
  const users =
    user && CREATEUSER_FIELDS.every((n) => user.fields.some((f) => f.name === n))
      ? {
          table: user.table,
          pk: user.pk.column,
          nowColumns: user.fields.filter((f) => f.autoNowAdd || f.autoNow).map((f) => f.column),
        }
      : undefined;
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    title: str(model.title),
    basePath: str(model.basePath),
    users: users && literal(users),
    seeds: seedsExpr(model, imports),
    imports: imports.print(),
  };
}
