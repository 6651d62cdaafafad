/**
 * The access matrix as a test (`@svcgen/runtime/access-test`): a service's generated `access-test.ts`
 * hands over its matrix (the access.json beside it) with the rows to make, and this module registers one test per operation with Node's test runner
 * (`node --test`), one subtest per kind of caller. Each operation gets a fresh in-memory SQLite
 * database with the migrations applied, a user of each kind (rows of the user model; tokens
 * minted with the service's keys) and one sample row per table, whose key fills `{pk}`; then the
 * real route is called as each caller and the answer compared with the cell's check:
 *
 * | Check | The cell | The answer must be |
 * |---|---|---|
 * | `401` | `401` | 401 |
 * | `403` | `403` | 403 |
 * | `allowed` | `2xx` | neither 401 nor 403 (a 2xx, or a 404 or 422 of the lookup or the validation of the empty body sent) |
 * | `authenticated` | `hooks`, for a caller whose token a declared built-in authenticator accepts | not 401: hooks decide, but a valid token is never "no credentials" |
 * | `unchecked` | `hooks` for anyone else (an anonymous caller of a public operation, a caller a custom authenticator decides) | not called: only the hook knows |
 *
 * Callers holding a role (`role:<name>`) are not called: a role is what the user model or a custom
 * authenticator says, which a generic test cannot grant.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import test, { type TestContext } from 'node:test';
import type { Express } from 'express';
import { generateKeyPair, type KeyPair, type TokenService } from '../auth/tokens';
import type { AuthUser } from '../auth/authenticators';
import { loadSettings, type Settings } from '../core/settings';
import { connect, type Db } from '../db/connection';
import { insertReturning } from '../db/inserts';
import { migrateLatest, type Migration } from '../db/migrations';
import { createLogger, type Logger } from './logging';

/** What one caller's answer must be (see the table above). */
export type AccessCheck = '401' | '403' | 'allowed' | 'authenticated' | 'unchecked';

/** A cell of the matrix, as access.json holds it. */
export type AccessCell = '401' | '403' | 'hooks' | '2xx';

/**
 * The matrix as access.json holds it (the generated test imports the file): the callers' names, and
 * per operation its route (`POST /api/notes/`) and each caller's cell. The cells are read as
 * strings, as TypeScript types a JSON file; `accessMatrixTest` refuses any but the four it knows.
 */
export interface AccessDocument {
  callers: readonly string[];
  operations: Readonly<Record<string, { route: string; access: Readonly<Record<string, string>> }>>;
}

/** A kind of caller, as access.md names its column. */
export interface AccessCaller {
  name: string;
  /** Whether the caller sends a token of an active user. */
  user: boolean;
  staff: boolean;
  superuser: boolean;
  /** Roles the caller must hold: such a caller is not called. */
  roles: readonly string[];
}

/** One row of the matrix, with the cell's check per caller. */
export interface AccessOperation {
  operationId: string;
  method: string;
  /** The route as OpenAPI writes it: `/api/notes/{pk}/`. */
  path: string;
  /** The cell's check, per caller. */
  checks: Readonly<Record<string, AccessCheck>>;
}

/** A row the test inserts into each fresh database, after the rows it references. */
export interface AccessSample {
  table: string;
  pk: string;
  /** The resource's collection path (`/api/notes/`): the key of this row fills `{pk}` in the routes under `{path}{pk}`. */
  path: string;
  /** The row's values; `keys` holds the keys of the samples inserted before it, by table. */
  row(keys: Readonly<Record<string, string | number>>): Record<string, unknown>;
}

export interface AccessMatrixTest {
  createService(options: { db: Db; keys: KeyPair; settings: Settings; logger: Logger }): {
    app: Express;
    context: { tokens: TokenService; loadUser(db: Db, sub: string): Promise<AuthUser | undefined> };
  };
  migrations: readonly Migration[];
  settings: Settings;
  /** The matrix: the service's access.json. */
  access: AccessDocument;
  /**
   * The `hooks` cells a custom authenticator decides, by operation: the callers sending a token that
   * no built-in authenticator of the operation accepts. Not called: only the authenticator knows.
   */
  authenticatorDecides?: Readonly<Record<string, readonly string[]>>;
  /** The user model: its table, and the row of a user named `name` with these flags. */
  users: { table: string; pk: string; row(name: string, flags: UserFlags): Record<string, unknown> };
  samples: readonly AccessSample[];
}

export interface UserFlags {
  is_active: boolean;
  is_staff: boolean;
  is_superuser: boolean;
}

/** The caller a column of the matrix names: `anonymous`, `authenticated`, `role:<name>`, `staff` or `superuser`. */
export function accessCaller(name: string): AccessCaller {
  const caller = { name, user: true, staff: false, superuser: false, roles: [] as string[] };
  if (name === 'anonymous') return { ...caller, user: false };
  if (name === 'authenticated') return caller;
  if (name === 'staff') return { ...caller, staff: true };
  // As Django creates them: a superuser is staff too.
  if (name === 'superuser') return { ...caller, staff: true, superuser: true };
  if (name.startsWith('role:')) return { ...caller, roles: [name.slice('role:'.length)] };
  throw new Error(`access.json names a caller the access test does not know: ${name}`);
}

/** What the test asserts of a cell (see the table above). */
export function accessCheck(cell: string | undefined, caller: AccessCaller, decidedByAuthenticator: boolean): AccessCheck {
  if (cell === '401' || cell === '403') return cell;
  if (cell === '2xx') return 'allowed';
  if (cell === 'hooks') return caller.user && !decidedByAuthenticator ? 'authenticated' : 'unchecked';
  throw new Error(`access.json holds a cell the access test does not know: ${String(cell)} for ${caller.name}`);
}

/** The matrix's operations, each with its check per caller, in the order access.json lists them. */
export function accessOperations(matrix: Pick<AccessMatrixTest, 'access' | 'authenticatorDecides'>): AccessOperation[] {
  const callers = matrix.access.callers.map(accessCaller);
  return Object.entries(matrix.access.operations).map(([operationId, row]) => {
    const [method, path] = row.route.split(' ');
    const decided = matrix.authenticatorDecides?.[operationId] ?? [];
    const checks = Object.fromEntries(callers.map((c) => [c.name, accessCheck(row.access[c.name], c, decided.includes(c.name))]));
    return { operationId, method, path, checks };
  });
}

/** The table whose sample row's key fills a route's `{pk}`: the sample whose path starts the route (the longest, if several). */
function tableOfRoute(samples: readonly AccessSample[], path: string): string | undefined {
  if (!path.includes('{pk}')) return undefined;
  const owners = samples.filter((s) => path.startsWith(`${s.path}{pk}`));
  return owners.sort((a, b) => b.path.length - a.path.length)[0]?.table;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Registers the matrix's tests: one per operation, one subtest per caller. */
export function accessMatrixTest(matrix: AccessMatrixTest): void {
  const keys = generateKeyPair();
  // Read before any test is registered: a caller or cell the test does not know fails the file.
  const callers = matrix.access.callers.map(accessCaller);
  for (const operation of accessOperations(matrix)) {
    test(`access matrix: ${operation.operationId} (${operation.method} ${operation.path})`, async (t) => {
      const call = await serve(t, matrix, callers, keys, operation);
      for (const caller of callers) {
        const check = operation.checks[caller.name];
        const label = `${operation.operationId} as ${caller.name}`;
        if (caller.roles.length) {
          await t.test(
            `${label}: not called`,
            { skip: 'a role comes from the user model or a custom authenticator; the generic test cannot grant it' },
            () => {},
          );
          continue;
        }
        if (check === 'unchecked') {
          await t.test(`${label}: decided by hooks`, { skip: 'only the hooks know the answer' }, () => {});
          continue;
        }
        await t.test(`${label}: ${describe(check)}`, async () => {
          const status = await call(caller);
          const where = `${label} (${operation.method} ${operation.path}): access.md says ${describe(check)}, the service answered ${status}`;
          if (!satisfies(check, status)) throw new Error(where);
        });
      }
    });
  }
}

function describe(check: Exclude<AccessCheck, 'unchecked'>): string {
  if (check === 'allowed') return 'neither 401 nor 403';
  if (check === 'authenticated') return 'not 401';
  return check;
}

function satisfies(check: Exclude<AccessCheck, 'unchecked'>, status: number): boolean {
  if (check === 'allowed') return status !== 401 && status !== 403;
  if (check === 'authenticated') return status !== 401;
  return status === Number(check);
}

/** A fresh service for one operation, served on a free port: `call(caller)` answers the status. */
async function serve(
  t: TestContext,
  matrix: AccessMatrixTest,
  callers: readonly AccessCaller[],
  keys: KeyPair,
  operation: AccessOperation,
) {
  const db = connect('sqlite::memory:', '');
  t.after(() => db.destroy());
  await migrateLatest(db, matrix.migrations);
  const settings = loadSettings(matrix.settings, {});
  const { app, context } = matrix.createService({ db, keys, settings, logger: createLogger({ SVC_LOG_LEVEL: 'silent' }) });

  const tokens = new Map<string, string>();
  for (const caller of callers) {
    if (!caller.user) continue;
    const name = `caller-${caller.name.replace(/[^A-Za-z0-9]+/g, '-')}`;
    const row = matrix.users.row(name, { is_active: true, is_staff: caller.staff, is_superuser: caller.superuser });
    const [inserted] = await insertReturning(db, db(matrix.users.table).insert(row), row, [matrix.users.pk]);
    const user = await context.loadUser(db, String(inserted[matrix.users.pk]));
    if (!user) throw new Error(`the user made for ${caller.name} does not authenticate`);
    tokens.set(caller.name, await context.tokens.issueFor(user));
  }
  const sampleKeys: Record<string, string | number> = {};
  for (const sample of matrix.samples) {
    const values = sample.row(sampleKeys);
    const [inserted] = await insertReturning(db, db(sample.table).insert(values), values, [sample.pk]);
    sampleKeys[sample.table] = inserted[sample.pk] as string | number;
  }

  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.close();
    // The callers' keep-alive connections would hold the test open until they time out.
    server.closeAllConnections();
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const table = tableOfRoute(matrix.samples, operation.path);
  const key = table !== undefined && sampleKeys[table] !== undefined ? String(sampleKeys[table]) : '0';
  const url = base + operation.path.replace(/\{pk\}/g, encodeURIComponent(key)).replace(/\{\w+\}/g, '1');
  return async (caller: AccessCaller): Promise<number> => {
    const token = tokens.get(caller.name);
    const body = BODY_METHODS.has(operation.method);
    const res = await fetch(url, {
      method: operation.method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? '{}' : undefined,
    });
    await res.arrayBuffer();
    return res.status;
  };
}
