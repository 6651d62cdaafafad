/**
 * Instances started together on one fresh database: three migration runs at once, each with its
 * own connection pool as separate instances have, all succeed; one applies the migrations, the
 * others find nothing left, and every migration is recorded once (the migration lock:
 * runtime/migrations.ts). Without the lock, Knex's own lock table makes the late runs fail with
 * "Migration table is already locked" or a duplicate table.
 */
import { connect, migrateLatest, type Db } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const { migrations } = require('../../generated/migrations');

jest.setTimeout(60_000);

describe.each(DIALECTS)('three instances migrating one fresh database at once (%s)', (dialect) => {
  let database: TestDatabase;
  let instances: Db[];

  beforeAll(async () => {
    database = await createDatabase(dialect);
    instances = [0, 1, 2].map(() => connect(database.url, ''));
  });
  afterAll(async () => {
    await Promise.all(instances.map((db) => db.destroy()));
    await database.drop();
  });

  it('all succeed and each migration is recorded once', async () => {
    const runs = await Promise.allSettled(instances.map((db) => migrateLatest(db, migrations)));
    expect(runs.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const applied = runs.map((r) => (r as PromiseFulfilledResult<string[]>).value).sort((a, b) => b.length - a.length);
    expect(applied).toEqual([
      [
        '0001_initial',
        '0002_articles_is_published_created_at_and_more',
        '0003_alter_articles_author_id',
        '0004_articles_title_search_and_more',
      ],
      [],
      [],
    ]);

    const db = database.db;
    const service = await db('svc_migrations').select('name').orderBy('id');
    expect(service.map((r) => r.name)).toEqual([
      '0001_initial',
      '0002_articles_is_published_created_at_and_more',
      '0003_alter_articles_author_id',
      '0004_articles_title_search_and_more',
    ]);
    const runtime = await db('svc_runtime_migrations').select('name').orderBy('id');
    expect(runtime.map((r) => r.name)).toEqual([
      'runtime_0001_used_refresh_tokens',
      'runtime_0002_token_revocations',
      'runtime_0003_idempotency_keys',
    ]);
    expect(await db('svc_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
  });
});
