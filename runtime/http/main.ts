/**
 * The command line of a generated service (`node main.js [serve|migrate|createuser]`): argument
 * parsing, the usage text, serving (alone or as the primary of a cluster), migrating (and
 * `migrate status`, `migrate rollback`), and `createuser`. A service's `main.ts` calls `runMain` with its own parts only: how to build the
 * service, its migrations, its default settings and files, its name and base path, and the table
 * `createuser` writes to when the service has a user model.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Express } from 'express';
import { hashPassword } from '../auth/password';
import { loadKeys, type KeyPair } from '../auth/tokens';
import { normalizeUsername, usernameProblems } from '../auth/username';
import { now } from '../core/convert';
import { ConfigurationError, loadDatabaseSettings, loadSettings, type Settings } from '../core/settings';
import { connect, dialectOf, type Db } from '../db/connection';
import {
  DataLossError,
  migrateLatest,
  migrationStatus,
  rollbackMigrations,
  UncheckedRollbackError,
  UNKNOWN_MIGRATIONS_POLICIES,
  type Migration,
  type UnknownMigrationsPolicy,
} from '../db/migrations';
import { insertReturning } from '../db/inserts';
import { attachReplicas, destroyDatabase, replicaUrls } from '../db/replicas';
import { seed, SeedError, type SeedResource } from '../operations/seed';
import { isClusterWorker, runPrimary, shutdownSignals, workerCount } from './cluster';
import { corsSettings, type CorsSettings } from './cors';
import { createLogger, type Logger } from './logging';
import { errorLine, listenAddress, serverLimits, startServer, type ShutdownTransactions } from './server';
import { httpSecuritySettings, type HttpSecuritySettings } from './security-headers';

/** The user table `createuser` writes: the user model's fields `username`, `email`, `password` and the three flags. */
export interface UserTable {
  table: string;
  /** The primary-key column: the id printed for the new user. */
  pk: string;
  /** Columns set to the current time (the model's auto_now and auto_now_add fields). */
  nowColumns: readonly string[];
}

/** A service's own parts, as its `main.ts` names them. */
export interface ServiceMain {
  /** The service's title, in the line announcing where it serves. */
  title: string;
  /** Mount point of the API, e.g. `/api` (empty at the root). */
  basePath: string;
  createService(options: {
    db: Db;
    keys: KeyPair;
    settings: Settings;
    logger: Logger;
    cors: CorsSettings;
    security: HttpSecuritySettings;
  }): {
    app: Express;
    context?: { transactions: ShutdownTransactions };
  };
  migrations: readonly Migration[];
  defaultSettings: Settings;
  /** The SQLite file used when DATABASE_URL is unset. */
  defaultSqliteFile: string;
  /** Where a development key pair is kept when no key files are configured. */
  devKeysDir: string;
  /** The table `createuser` writes; without one the service has no `createuser` command. */
  users?: UserTable;
  /** The resources `seed` loads fixtures into, by route base: those with a create operation. */
  seeds?: Readonly<Record<string, SeedResource>>;
}

/** The usage text: the service's commands and the environment it reads. */
function usage(service: ServiceMain): string {
  const createUser = service.users
    ? `
  createuser  --username NAME --email E --password P [--staff] [--superuser] [--inactive]
              create a user (password hashed; a superuser is staff too); prints the new id`
    : '';
  return `usage: node main.js [serve|migrate|seed${service.users ? '|createuser' : ''}]

  serve       apply pending migrations, then serve on HOST:PORT (default 127.0.0.1:8000)
  migrate     apply pending migrations and exit
  migrate status
              list the migrations applied and pending; changes nothing
  migrate rollback [N] [--allow-data-loss]
              revert the last N applied migrations (default 1) in one transaction; refused when
              it would drop a table with rows or a column with values, unless --allow-data-loss
  seed FILE...
              apply pending migrations, then insert the rows of YAML or JSON fixture files
              ({resource: [{field: value}]}), validated through the create schemas, in one transaction${createUser}

Environment: DATABASE_URL (unset: SQLite file ${service.defaultSqliteFile}; sqlite:PATH; postgres://...; mysql://...),
DATABASE_DIRECT_URL, DATABASE_REPLICA_URLS, SVC_DB_CONNECT_TIMEOUT, SVC_DB_ACQUIRE_TIMEOUT,
SVC_DB_STATEMENT_TIMEOUT, SVC_DB_POOL_MAX, HOST, PORT, NODE_ENV, SVC_JWT_PRIVATE_KEY_FILE,
SVC_JWT_PUBLIC_KEY_FILE, SVC_WORKERS, SVC_LOG_LEVEL, SVC_METRICS, SVC_CORS_*, SVC_SECURITY_HEADERS, SVC_DOCS, SVC_PUBLIC_URL, SVC_HEADERS_TIMEOUT, SVC_REQUEST_TIMEOUT,
SVC_KEEP_ALIVE_TIMEOUT, SVC_MAX_CONNECTIONS, SVC_UNKNOWN_MIGRATIONS and the SVC_* settings.`;
}

/**
 * Runs the command `argv` names and exits with its code: 0 on success, 1 when it fails, 2 on a
 * command line it does not understand; a configuration error is one line on stderr and exit 1.
 */
export function runMain(service: ServiceMain, argv: string[] = process.argv.slice(2)): void {
  main(service, argv).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err: unknown) => {
      console.error(err instanceof ConfigurationError ? `configuration error: ${err.message}` : err);
      process.exit(1);
    },
  );
}

async function main(service: ServiceMain, argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  const commands = ['serve', 'migrate', 'seed', ...(service.users ? ['createuser'] : [])];
  if (command === '--help' || command === '-h') {
    console.log(usage(service));
    return 0;
  }
  if (!commands.includes(command)) {
    console.error(`unknown command "${command}"\n\n${usage(service)}`);
    return 2;
  }
  if (command === 'serve') return serve(service);
  if (command === 'migrate' && argv.length > 1) return migrateCommand(service, argv.slice(1));
  if (command === 'seed' && argv.length < 2) {
    console.error(`seed: name one or more fixture files\n\n${usage(service)}`);
    return 2;
  }
  // createuser prints only the new id on stdout; progress goes to stderr there.
  const db = await openDatabase(service, command === 'migrate' ? console.log : console.error);
  try {
    if (command === 'createuser') return await createUser(service, service.users!, db, argv.slice(1));
    if (command === 'seed') return await seedCommand(service, db, argv.slice(1));
    return 0;
  } finally {
    await destroyDatabase(db);
  }
}

/** Connects to DATABASE_URL (or the default SQLite file), with the read replicas of DATABASE_REPLICA_URLS. */
function connectDatabase(service: ServiceMain): Db {
  const db = connect(process.env.DATABASE_URL, service.defaultSqliteFile);
  attachReplicas(db, replicaUrls());
  return db;
}

/** `SVC_UNKNOWN_MIGRATIONS`: what a start does beside migrations of another version (`refuse` unless set). */
function unknownMigrationsPolicy(): UnknownMigrationsPolicy {
  const value = process.env.SVC_UNKNOWN_MIGRATIONS || 'refuse';
  if (!(UNKNOWN_MIGRATIONS_POLICIES as readonly string[]).includes(value)) {
    throw new ConfigurationError(`SVC_UNKNOWN_MIGRATIONS must be ${UNKNOWN_MIGRATIONS_POLICIES.join(' or ')}, got "${value}"`);
  }
  return value as UnknownMigrationsPolicy;
}

/**
 * Applies pending migrations, then connects. Migrations and their lock go through
 * DATABASE_DIRECT_URL when it is set (the database itself, where DATABASE_URL names a pooler such as
 * PgBouncer in transaction mode), on a connection of their own without the statement timeout (a
 * migration may rebuild a large table). Migrations of another version of the service in the
 * database stop it unless `unknownPolicy` (SVC_UNKNOWN_MIGRATIONS) is `serve`: see migrateLatest.
 */
async function openDatabase(service: ServiceMain, log: (message: string) => void, unknownPolicy = unknownMigrationsPolicy()): Promise<Db> {
  const db = connectDatabase(service);
  const direct = process.env.DATABASE_DIRECT_URL || undefined;
  const migrating = connect(direct ?? process.env.DATABASE_URL, service.defaultSqliteFile, undefined, {
    ...loadDatabaseSettings(),
    statementTimeoutMs: 0,
    transactionTimeoutMs: 0,
  });
  try {
    if (direct !== undefined && dialectOf(migrating) !== dialectOf(db)) {
      throw new ConfigurationError(`DATABASE_DIRECT_URL must name the same kind of database as DATABASE_URL (${dialectOf(db).name})`);
    }
    let unknown: string[] = [];
    const applied = await migrateLatest(migrating, service.migrations, { unknown: unknownPolicy, onUnknown: (names) => (unknown = names) });
    if (unknown.length)
      log(`database has migrations this version does not know (${unknown.join(', ')}); serving beside them (SVC_UNKNOWN_MIGRATIONS=serve)`);
    else log(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database is up to date');
  } catch (err) {
    await destroyDatabase(db);
    throw err;
  } finally {
    await migrating.destroy();
  }
  return db;
}

/**
 * Serves until SIGINT or SIGTERM, then lets the requests in flight finish (SVC_SHUTDOWN_TIMEOUT, and
 * as long again for those holding a transaction, which are never cut once committed),
 * closes the database and exits 0. The settings and the keys are checked first: in production,
 * missing keys stop the start before the database is touched. A start that fails prints one line
 * and exits 1. With SVC_WORKERS > 1 this process migrates, then runs the workers, which serve.
 */
async function serve(service: ServiceMain): Promise<number> {
  const settings = loadSettings(service.defaultSettings);
  const logger = createLogger();
  const cors = corsSettings();
  const security = httpSecuritySettings();
  const limits = serverLimits();
  const workers = workerCount();
  const unknownPolicy = unknownMigrationsPolicy();
  const keys = await loadKeys({
    privateKeyFile: process.env.SVC_JWT_PRIVATE_KEY_FILE,
    publicKeyFile: process.env.SVC_JWT_PUBLIC_KEY_FILE,
    devKeysDir: service.devKeysDir,
    production: process.env.NODE_ENV === 'production',
  });
  const { host, port } = listenAddress(process.env);
  let db: Db;
  try {
    // The primary (or the single process) has applied the migrations before any worker starts.
    db = isClusterWorker() ? connectDatabase(service) : await openDatabase(service, console.log, unknownPolicy);
  } catch (err) {
    console.error(`cannot open the database: ${errorLine(err)}`);
    return 1;
  }
  if (workers > 1 && !isClusterWorker()) {
    await destroyDatabase(db);
    console.log(`${service.title}: starting ${workers} workers on http://${host}:${port}${service.basePath}`);
    return runPrimary({ workers, log: console.log });
  }
  const { app, context } = service.createService({ db, keys, settings, logger, cors, security });
  try {
    const server = await startServer(app, {
      host,
      port,
      shutdownTimeoutMs: settings.SVC_SHUTDOWN_TIMEOUT * 1000,
      limits,
      transactions: context?.transactions,
      onClose: () => destroyDatabase(db),
      signals: shutdownSignals(),
    });
    const origin = `http://${host}:${server.port}${service.basePath}`;
    console.log(`${service.title} listening on ${origin} (docs: ${origin}/docs)`);
    await server.closed;
    return 0;
  } catch (err) {
    console.error(errorLine(err));
    return 1;
  }
}

/** `migrate status` and `migrate rollback [N] [--allow-data-loss]`: neither applies pending migrations. */
async function migrateCommand(service: ServiceMain, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  let steps = 1;
  let allowDataLoss = false;
  if (sub === 'rollback') {
    const read = readArgs(rest, ROLLBACK_OPTIONS, (arg) => /^[1-9]\d{0,5}$/.test(arg));
    if ('unexpected' in read) {
      console.error(
        `migrate rollback: unexpected argument "${read.unexpected}" (a number of migrations, or --allow-data-loss)\n\n${usage(service)}`,
      );
      return 2;
    }
    if (read.positionals.length) steps = Number(read.positionals[read.positionals.length - 1]);
    allowDataLoss = read.values['allow-data-loss'] === true;
  } else if (sub !== 'status' || rest.length) {
    console.error(`migrate: unexpected argument "${sub === 'status' ? rest[0] : sub}"\n\n${usage(service)}`);
    return 2;
  }
  const db = connectDatabase(service);
  try {
    if (sub === 'status') {
      const status = await migrationStatus(db, service.migrations);
      for (const m of status.applied) console.log(`applied  ${m.name} (batch ${m.batch})`);
      for (const name of status.pending) console.log(`pending  ${name}`);
      for (const name of status.unknown) console.log(`unknown  ${name} (applied, but not a migration of this service)`);
      console.log(
        `${status.applied.length} applied, ${status.pending.length} pending${status.unknown.length ? `, ${status.unknown.length} unknown` : ''}`,
      );
      return 0;
    }
    try {
      const reverted = await rollbackMigrations(db, service.migrations, steps, { allowDataLoss });
      console.log(reverted.length ? `reverted migrations: ${reverted.join(', ')}` : 'no migration to revert');
      return 0;
    } catch (err) {
      if (!(err instanceof DataLossError) && !(err instanceof UncheckedRollbackError)) throw err;
      console.error(
        `migrate rollback: refused: ${err.message}; nothing was reverted. Run it again with --allow-data-loss to revert anyway.`,
      );
      return 1;
    }
  } finally {
    await db.destroy();
  }
}

/** `seed FILE...`: every problem on stderr and exit 1 with nothing written, or the rows inserted per resource. */
async function seedCommand(service: ServiceMain, db: Db, files: string[]): Promise<number> {
  try {
    const { inserted } = await seed(db, service.seeds ?? {}, files);
    console.log(`seeded ${[...inserted].map(([name, n]) => `${name}: ${n}`).join(', ') || 'nothing'}`);
    return 0;
  } catch (err) {
    if (!(err instanceof SeedError)) {
      console.error(`seed: the database refused a row: ${errorLine(err)}; nothing was written`);
      return 1;
    }
    for (const problem of err.problems) console.error(`seed: ${problem}`);
    console.error(`seed: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}; nothing was written`);
    return 1;
  }
}

/** The options of `migrate rollback` (the CLI reference is checked against them). */
export const ROLLBACK_OPTIONS = { 'allow-data-loss': { type: 'boolean' } } as const satisfies ArgOptions;

/** The options of `createuser` (the CLI reference is checked against them). */
export const CREATEUSER_OPTIONS = {
  username: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  staff: { type: 'boolean' },
  superuser: { type: 'boolean' },
  inactive: { type: 'boolean' },
} as const satisfies ArgOptions;

type ArgOptions = NonNullable<ParseArgsConfig['options']>;
interface ReadArgs {
  values: Record<string, string | boolean>;
  positionals: string[];
}

/**
 * `args` read by node:util's `parseArgs` against `options` and the positional arguments `positional`
 * accepts, or the first argument that is none of them, as it was written: an unknown option, a flag
 * given a value, an option without its value, `--`, or a positional argument refused.
 */
function readArgs(
  args: string[],
  options: ArgOptions,
  positional: (arg: string) => boolean = () => false,
): ReadArgs | { unexpected: string } {
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const read: ReadArgs = { values: {}, positionals: [] };
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!positional(token.value)) return { unexpected: token.value };
      read.positionals.push(token.value);
      continue;
    }
    const option = token.kind === 'option' && Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!option || token.kind !== 'option' || (option.type === 'boolean') !== (token.value === undefined))
      return { unexpected: args[token.index] };
    read.values[token.name] = token.value ?? true;
  }
  return read;
}

/**
 * `createuser`: a user with a hashed password; non-zero with a message when the username breaks the
 * rule registration applies (letters, digits and @ . + - _) or when the name or email is taken.
 */
async function createUser(service: ServiceMain, users: UserTable, db: Db, args: string[]): Promise<number> {
  const read = readArgs(args, CREATEUSER_OPTIONS);
  if ('unexpected' in read) {
    console.error(`createuser: unexpected argument "${read.unexpected}"\n\n${usage(service)}`);
    return 2;
  }
  const values: Record<string, string> = {};
  const on = new Set<string>();
  for (const [name, value] of Object.entries(read.values)) {
    if (value === true) on.add(`--${name}`);
    else values[name] = String(value);
  }
  for (const name of ['username', 'email', 'password']) {
    if (!values[name]) {
      console.error(`createuser: --${name} is required\n\n${usage(service)}`);
      return 2;
    }
  }
  // Stored in its NFKC form, as registration stores it: a look-alike of a taken name is taken.
  values.username = normalizeUsername(values.username);
  const [problem] = usernameProblems(values.username);
  if (problem) {
    console.error(`createuser: username "${values.username}" is not allowed: ${problem.msg}`);
    return 1;
  }
  if (await db(users.table).where('username', values.username).first(users.pk)) {
    console.error(`createuser: username "${values.username}" is already taken`);
    return 1;
  }
  if (await db(users.table).where('email', values.email).first(users.pk)) {
    console.error(`createuser: email "${values.email}" is already registered`);
    return 1;
  }
  const user = {
    username: values.username,
    email: values.email,
    password: await hashPassword(values.password),
    is_active: !on.has('--inactive'),
    // As Django creates them: a superuser is staff too (the access matrix's superuser column counts on it).
    is_staff: on.has('--staff') || on.has('--superuser'),
    is_superuser: on.has('--superuser'),
    ...Object.fromEntries(users.nowColumns.map((column) => [column, now()])),
  };
  const [row] = await insertReturning(db, db(users.table).insert(user), user, [users.pk]);
  console.log(String(row[users.pk]));
  return 0;
}
