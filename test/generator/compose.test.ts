/**
 * The compose files: the blog's `compose.yaml` and the one `svcgen init` writes. The deployment guide
 * (docs/guides/scale.md) says to set SVC_REDIS_URL whenever more than one process serves (SVC_WORKERS > 1 included), or each
 * process counts failed logins and rate limits on its own: each file runs its API with two workers,
 * so it runs Redis too, started healthy before the API, and points SVC_REDIS_URL at it. init's
 * runs the database `--db` chooses: a PostgreSQL or MariaDB service started healthy before the API,
 * or the SQLite file in a volume.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Handlebars from 'handlebars';
import { parse } from 'yaml';
import { INIT_DATABASES, INIT_TEMPLATES, type InitDatabase } from '../../generator/cli/init';

const ROOT = path.resolve(__dirname, '../..');

interface Compose {
  services: Record<
    string,
    {
      image?: string;
      environment?: Record<string, string>;
      depends_on?: Record<string, { condition: string }>;
      healthcheck?: { test: string[] };
    }
  >;
}

const blog = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as Compose;
const init = (db: InitDatabase) =>
  parse(
    Handlebars.compile(fs.readFileSync(path.join(INIT_TEMPLATES, 'compose.yaml.hbs'), 'utf8'), { noEscape: true, strict: true })({
      title: 'App API',
      dbName: 'app',
      db: {
        sqlite: db === 'sqlite',
        postgres: db === 'postgres',
        mysql: db === 'mysql',
        label: INIT_DATABASES[db].label,
        driver: INIT_DATABASES[db].driver,
      },
    }),
  ) as Compose & { volumes?: Record<string, unknown> };

describe.each([
  ['the blog', blog, 'postgres'],
  ['svcgen init --db sqlite', init('sqlite'), 'sqlite'],
  ['svcgen init --db postgres', init('postgres'), 'postgres'],
  ['svcgen init --db mysql', init('mysql'), 'mysql'],
] as const)('compose.yaml of %s', (_, compose, db) => {
  it('runs two API workers with Redis, as the deployment guide asks of more than one process', () => {
    const api = compose.services.api;
    expect(api.environment?.SVC_WORKERS).toBe('2');
    expect(api.environment?.SVC_REDIS_URL).toBe('redis://redis:6379');
    expect(api.depends_on).toEqual({
      ...(db === 'sqlite' ? {} : { db: { condition: 'service_healthy' } }),
      redis: { condition: 'service_healthy' },
    });
    expect(compose.services.redis).toEqual({
      image: 'redis:7',
      healthcheck: { test: ['CMD', 'redis-cli', 'ping'], interval: '5s', timeout: '3s', retries: 10 },
    });
  });

  it('runs the database its DATABASE_URL names', () => {
    const url = compose.services.api.environment?.DATABASE_URL;
    if (db === 'sqlite') {
      // Unset: the SQLite file of service.yaml, in data/, which the volume keeps.
      expect(url).toBeUndefined();
      expect(compose.services.db).toBeUndefined();
      expect((compose.services.api as { volumes?: string[] }).volumes).toEqual(['db-data:/app/data']);
    } else {
      expect(url).toMatch(db === 'postgres' ? /^postgres:\/\/\w+:\w+@db:5432\/\w+$/ : /^mysql:\/\/app:app@db:3306\/app$/);
      expect(compose.services.db.image).toBe(db === 'postgres' ? 'postgres:16' : 'mariadb:11');
      expect(compose.services.db.healthcheck).toBeDefined();
    }
  });
});
