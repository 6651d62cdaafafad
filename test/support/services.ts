/**
 * Starting the generated services against a test database: migrate, then build the Express app.
 */
import type { Express } from 'express';
import {
  loadSettings,
  migrateLatest,
  type CorsSettings,
  type HttpSecuritySettings,
  type Logger,
  type Metrics,
  type Migration,
  type ServiceContext,
  type Settings,
} from '../../runtime';
import { createDatabase, type Dialect, type TestDatabase } from './databases';
import { testKeys } from './keys';

interface GeneratedService {
  createService(
    options: {
      db: TestDatabase['db'];
      keys: ReturnType<typeof testKeys>;
      settings?: Settings;
      logError?: (e: unknown) => void;
    } & ServiceExtras,
  ): {
    app: Express;
    context: ServiceContext;
  };
  migrations: Migration[];
  defaults: Settings;
}

/** What a test may give the service beyond its settings; a `logger` also receives the errors (`errors` stays empty). */
export interface ServiceExtras {
  logger?: Logger;
  cors?: CorsSettings;
  metrics?: Metrics | false;
  security?: HttpSecuritySettings;
}

export interface RunningService {
  app: Express;
  context: ServiceContext;
  database: TestDatabase;
  settings: Settings;
  /** Unhandled errors the service logged (500s). */
  errors: unknown[];
  close(): Promise<void>;
}

async function start(
  generated: GeneratedService,
  dialect: Dialect,
  overrides: Partial<Settings> = {},
  extras: ServiceExtras = {},
): Promise<RunningService> {
  const database = await createDatabase(dialect);
  await migrateLatest(database.db, generated.migrations);
  const settings = loadSettings(generated.defaults, {}, overrides);
  const errors: unknown[] = [];
  const logError = extras.logger ? undefined : (e: unknown) => errors.push(e);
  const { app, context } = generated.createService({ db: database.db, keys: testKeys(), settings, logError, ...extras });
  return { app, context, database, settings, errors, close: () => database.drop() };
}

/** The blog in `generated/`. */
export function startBlog(dialect: Dialect, overrides: Partial<Settings> = {}, extras: ServiceExtras = {}): Promise<RunningService> {
  return start(
    {
      createService: require('../../generated/app').createService,
      migrations: require('../../generated/migrations').migrations,
      defaults: require('../../generated/settings').DEFAULT_SETTINGS,
    },
    dialect,
    overrides,
    extras,
  );
}

/** The showcase fixture in `test/fixtures/showcase/generated/`. */
export function startShowcase(dialect: Dialect, overrides: Partial<Settings> = {}): Promise<RunningService> {
  return start(
    {
      createService: require('../fixtures/showcase/generated/app').createService,
      migrations: require('../fixtures/showcase/generated/migrations').migrations,
      defaults: require('../fixtures/showcase/generated/settings').DEFAULT_SETTINGS,
    },
    dialect,
    overrides,
  );
}

/** The querying fixture (list filters) in `test/fixtures/querying/generated/`. */
export function startQuerying(dialect: Dialect, overrides: Partial<Settings> = {}): Promise<RunningService> {
  return start(
    {
      createService: require('../fixtures/querying/generated/app').createService,
      migrations: require('../fixtures/querying/generated/migrations').migrations,
      defaults: require('../fixtures/querying/generated/settings').DEFAULT_SETTINGS,
    },
    dialect,
    overrides,
  );
}
