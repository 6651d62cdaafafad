/**
 * View of `access-test.ts`: the access matrix (access.md) as a test for Node's test runner. The file
 * hands the runtime's `accessMatrixTest` the matrix as access.json beside it holds it (imported, so
 * the compiler checks its shape), what that file does not say (the `hooks` cells a custom
 * authenticator decides, see `accessCheck`), a row of the user model for each kind of caller and a
 * sample row of every table, whose key fills `{pk}` in the routes under its resource's path. Written
 * only for a service whose user model has `is_staff` and `is_superuser`, so that every caller kind
 * the matrix names can be made.
 */
import { ACCESS_JSON } from '../access/gate';
import { accessCheck, type AccessMatrix } from '../access/matrix';
import type { Field, Resource, ServiceModel } from '../model/model';
import { literal, str } from '../model/names';
import { header, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { propertyKey } from './typescript';

/** The flags of a user row, which the test sets per caller. */
const FLAGS = ['is_active', 'is_staff', 'is_superuser'];

/** The user model, when the test can make every kind of caller from it. */
export function accessTestUser(model: ServiceModel): Resource | undefined {
  const user = model.resources.find((r) => r.model === model.auth.userModel);
  return user && ['is_staff', 'is_superuser'].every((n) => user.fields.some((f) => f.name === n)) ? user : undefined;
}

/** Whether a column must be given a value on insert: not null, without a default the database or the service fills. */
function required(f: Field): boolean {
  if (f.primaryKey) return !f.autoIncrement;
  return !f.nullable && !f.hasDefault;
}

/** How a row names itself in its text: the user row function's parameter `name`, or a fixed word. */
type RowName = { parameter: string } | { word: string };

/** Text around the row's name, as a TypeScript expression. */
function text(name: RowName, before = '', after = ''): string {
  return 'word' in name
    ? str(`${before}${name.word}${after}`)
    : before || after
      ? `\`${before}\${${name.parameter}}${after}\``
      : name.parameter;
}

/**
 * A value of the column's type, as a TypeScript expression: text holds the row's name, so that the
 * unique columns of users differ; a foreign key is the key of the referenced table's sample row.
 */
function sampleValue(f: Field, name: RowName, imports: Imports): string {
  if (f.choices?.length) return literal(f.choices[0]);
  if (f.autoNow || f.autoNowAdd) return `${imports.runtime('now')}()`;
  switch (f.type) {
    case 'integer':
    case 'big_integer':
    case 'float':
      return '1';
    case 'decimal':
      return "'1'";
    case 'boolean':
      return 'false';
    case 'date':
      return "'2000-01-01'";
    case 'datetime':
      return `${imports.runtime('now')}()`;
    case 'uuid':
      return `${imports.value('node:crypto', 'randomUUID')}()`;
    case 'email':
      return text(name, '', '@example.com');
    case 'url':
      return text(name, 'https://example.com/');
    case 'json':
      return "'{}'";
    case 'password':
      // Never a bcrypt hash: the callers' tokens are minted, nobody logs in.
      return "'!'";
    case 'foreign_key':
      return `keys${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(f.relation!.targetTable) ? `.${f.relation!.targetTable}` : `[${str(f.relation!.targetTable)}]`}`;
    default:
      return text(name);
  }
}

/** The resources whose sample rows can be made, each after the ones its required foreign keys reference. */
function sampleOrder(model: ServiceModel): Resource[] {
  const out: Resource[] = [];
  const placed = new Set<string>();
  let pending = [...model.resources];
  for (;;) {
    const ready = pending.filter((r) =>
      r.fields.every((f) => f.type !== 'foreign_key' || !required(f) || placed.has(f.relation!.targetTable)),
    );
    if (!ready.length) return out;
    for (const r of ready) {
      out.push(r);
      placed.add(r.table);
    }
    pending = pending.filter((r) => !placed.has(r.table));
  }
}

/** `{ column: value, ... }` of the required columns, and `extra` entries after them. */
function rowObject(fields: Field[], name: RowName, imports: Imports, extra: string[] = []): string {
  const entries = fields.filter(required).map((f) => `${propertyKey(f.column)}: ${sampleValue(f, name, imports)}`);
  return `({ ${[...entries, ...extra].join(', ')} })`;
}

/**
 * What access.json does not say of the checks: the `hooks` cells of callers with a token that a
 * custom authenticator decides (not called), by operation. Every other `hooks` cell of such a
 * caller is checked as not 401 (see `accessCheck`).
 */
export function authenticatorDecides(matrix: AccessMatrix): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const row of matrix.rows) {
    const callers = matrix.callers.filter((c) => c.user && row.access[c.name] === 'hooks' && accessCheck(row, c) === 'unchecked');
    if (callers.length) out[row.operationId] = callers.map((c) => c.name);
  }
  return out;
}

export function accessTestView(model: ServiceModel, matrix: AccessMatrix, ctx: RenderContext) {
  const user = accessTestUser(model)!;
  const imports = new Imports(runtimeFrom(ctx, 0));
  imports.value(`${runtimeFrom(ctx, 0)}/access-test`, 'accessMatrixTest');
  imports.value('./app', 'createService');
  imports.default(`./${ACCESS_JSON}`, 'access');
  imports.value('./migrations', 'migrations');
  imports.value('./settings', 'DEFAULT_SETTINGS');

  const flags = FLAGS.filter((n) => user.fields.some((f) => f.name === n));
  const userFields = user.fields.filter((f) => !flags.includes(f.name));
  const userRow = rowObject(
    userFields,
    { parameter: 'name' },
    imports,
    flags.map((n) => `${n}: flags.${n}`),
  );
  const base = model.basePath.replace(/\/+$/, '');
  const samples = sampleOrder(model).map((r) => {
    const usesKeys = r.fields.some((f) => f.type === 'foreign_key' && required(f));
    return `{ table: ${str(r.table)}, pk: ${str(r.pk.column)}, path: ${str(`${base}/${r.base}/`)}, row: (${usesKeys ? 'keys' : ''}) => ${rowObject(r.fields, { word: 'sample' }, imports)} }`;
  });
  const decides = Object.entries(authenticatorDecides(matrix)).map(([id, callers]) => `${propertyKey(id)}: ${literal(callers)}`);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    imports: imports.print(),
    users: `{ table: ${str(user.table)}, pk: ${str(user.pk.column)}, row: (name, flags) => ${userRow} }`,
    samples,
    authenticatorDecides: decides.length ? `{ ${decides.join(', ')} }` : undefined,
  };
}
