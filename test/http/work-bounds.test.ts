/**
 * The work one request can cause is bounded, by default, with the same answers on every database:
 * a list field holds at most 1000 items unless its spec says otherwise, and `contains`/`overlap`
 * read a list once per row (never once per value); a nested write's list takes at most 100 items;
 * a `json` value nests at most 20 levels; a transaction runs at most SVC_DB_TRANSACTION_TIMEOUT
 * (rolled back and answered 503 past it); MariaDB bounds each statement by SVC_DB_STATEMENT_TIMEOUT;
 * and readiness answers while long transactions hold every connection of the requests' pool.
 */
import request from 'supertest';
import { connect, loadSettings, type Db } from '../../runtime';
import { DEFAULT_DATABASE_SETTINGS, type DatabaseSettings } from '../../runtime/core/settings';
import { isConnectionFailure } from '../../runtime/db/driver-errors';
import { TransactionGate, TransactionTimeoutError } from '../../runtime/operations/transactions';
import { DIALECTS, type Dialect, type TestDatabase } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { testKeys } from '../support/keys';
import { startShowcase, type RunningService } from '../support/services';

const showcase = {
  createService: require('../fixtures/showcase/generated/app').createService,
  migrations: require('../fixtures/showcase/generated/migrations').migrations,
  defaults: require('../fixtures/showcase/generated/settings').DEFAULT_SETTINGS,
};

const UNAVAILABLE = { detail: 'Service Unavailable' };
const CLERK = { 'X-Roles': 'clerk' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A list nested `depth` levels deep: `[[…[1]…]]`. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** The showcase on `database`'s URL, through a connection with `settings` of its own. */
function showcaseOn(
  database: TestDatabase,
  settings: Partial<DatabaseSettings>,
): { app: import('express').Express; db: Db; errors: unknown[] } {
  const db = connect(database.url, '', undefined, { ...DEFAULT_DATABASE_SETTINGS, ...settings });
  const errors: unknown[] = [];
  const { app } = showcase.createService({
    db,
    keys: testKeys(),
    settings: loadSettings(showcase.defaults, {}),
    logError: (e: unknown) => errors.push(e),
  });
  return { app, db, errors };
}

describe.each(DIALECTS)('the work one request can cause (%s)', (dialect: Dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  describe('list fields', () => {
    it('hold at most 1000 items by default (a 422 past it), as many as a spec sets otherwise', async () => {
      const ratings = Array.from({ length: 1001 }, (_, i) => i);
      const over = await request(svc.app).post('/v/bookmarks/').send({ title: 'long', ratings });
      expect([over.status, over.body]).toEqual([
        422,
        { detail: [{ type: 'too_long', loc: ['body', 'data', 'ratings'], msg: 'List should have at most 1000 items' }] },
      ]);
      const full = await request(svc.app)
        .post('/v/bookmarks/')
        .send({ title: 'full', ratings: ratings.slice(0, 1000) });
      expect([full.status, full.body.ratings]).toEqual([201, ratings.slice(0, 1000)]);
      const tags = await request(svc.app)
        .post('/v/bookmarks/')
        .send({ title: 'tags', tags: ['1', '2', '3', '4', '5', '6'] });
      expect([tags.status, tags.body]).toEqual([
        422,
        { detail: [{ type: 'too_long', loc: ['body', 'data', 'tags'], msg: 'List should have at most 5 items' }] },
      ]);
    });

    it('answer contains and overlap of 1000 values over 1000 items (SQLite refused 940 values: expression tree too large)', async () => {
      const ratings = Array.from({ length: 1000 }, (_, i) => 5000 + i);
      const { body: row } = await request(svc.app).post('/v/bookmarks/').send({ title: 'thousand', ratings });
      const every = await request(svc.app).get(`/v/bookmarks/?ratings__contains=${ratings.join(',')}&page_size=100`);
      expect([every.status, every.body]).toEqual([200, { items: [row], count: 1 }]);
      const missing = await request(svc.app).get(`/v/bookmarks/?ratings__contains=${[...ratings.slice(1), 1].join(',')}&page_size=100`);
      expect([missing.status, missing.body]).toEqual([200, { items: [], count: 0 }]);
      const any = await request(svc.app).get(`/v/bookmarks/?ratings__overlap=${[-7, 5999].join(',')}&page_size=100`);
      expect([any.status, any.body]).toEqual([200, { items: [row], count: 1 }]);
    });

    it('read a row of 140,000 items once per contains, not once per value (58 s on SQLite, 22 s on MariaDB before)', async () => {
      // A row written before the default cap (or by a hook): the filter's work must still be small.
      const { body: row } = await request(svc.app).post('/v/bookmarks/').send({ title: 'legacy' });
      const items = Array.from({ length: 140_000 }, (_, i) => i);
      if (dialect === 'postgres')
        await svc.database.db.raw(`update bookmarks set ratings = ?::integer[] where id = ?`, [`{${items.join(',')}}`, row.id]);
      else await svc.database.db.raw(`update bookmarks set ratings = ? where id = ?`, [JSON.stringify(items), row.id]);
      const values = Array.from({ length: 930 }, (_, i) => 139_000 + i);
      const started = Date.now();
      const res = await request(svc.app).get(`/v/bookmarks/?ratings__contains=${values.join(',')}`);
      const ms = Date.now() - started;
      expect([res.status, res.body.items.map((b: { title: string }) => b.title)]).toEqual([200, ['legacy']]);
      expect(ms).toBeLessThan(5000);
      await svc.database.db('bookmarks').where({ id: row.id }).del();
    });
  });

  describe('json values', () => {
    it.each([
      ['21 levels', 21],
      ['4,100 levels (stored before on SQLite and PostgreSQL; MariaDB answered 409 from 32 levels)', 4100],
    ])('nested %s deep are a 422', async (_what, depth) => {
      const detail = [{ type: 'json_too_deep', loc: ['body', 'data', 'extra'], msg: 'JSON value should be nested at most 20 levels deep' }];
      const created = await request(svc.app)
        .post('/v/widgets/')
        .send({ name: `deep-${depth}`, extra: nested(depth) });
      expect([created.status, created.body]).toEqual([422, { detail }]);
      const { body: widget } = await request(svc.app)
        .post('/v/widgets/')
        .send({ name: `shallow-${depth}`, extra: { a: 1 } });
      const patched = await request(svc.app)
        .patch(`/v/widgets/${widget.id}/`)
        .send({ extra: { deep: nested(depth - 1) } });
      expect([patched.status, patched.body]).toEqual([422, { detail }]);
    });

    it('nested 20 levels deep are stored and read back on every database', async () => {
      const extra = { a: nested(19) };
      const created = await request(svc.app).post('/v/widgets/').send({ name: 'deep-20', extra });
      expect([created.status, created.body.extra]).toEqual([201, extra]);
      // The first by name (the widgets' default ordering).
      const listed = await request(svc.app).get(`/v/widgets/?limit=1`);
      expect([listed.status, listed.body.items]).toEqual([200, [created.body]]);
    });
  });

  describe('nested writes', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ product: `p${i}` }));

    it('take at most 100 items per list by default: 101 are a 422 and nothing is written', async () => {
      const before = await svc.database.db('orders').count({ n: '*' });
      const res = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'many', lines: lines(101) });
      expect([res.status, res.body]).toEqual([
        422,
        { detail: [{ type: 'too_long', loc: ['body', 'data', 'lines'], msg: 'List should have at most 100 items' }] },
      ]);
      expect(await svc.database.db('orders').count({ n: '*' })).toEqual(before);
      const { body: order } = await request(svc.app).post('/v/orders/').set(CLERK).send({ customer: 'one' });
      const update = await request(svc.app)
        .patch(`/v/orders/${order.id}/`)
        .set(CLERK)
        .send({ notes: Array.from({ length: 101 }, (_, i) => ({ text: `n${i}` })) });
      expect([update.status, update.body]).toEqual([
        422,
        { detail: [{ type: 'too_long', loc: ['body', 'data', 'notes'], msg: 'List should have at most 100 items' }] },
      ]);
    });

    it('take 100 items', async () => {
      const res = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'hundred', lines: lines(100) });
      expect([res.status, res.body.lines.length]).toEqual([201, 100]);
    });
  });

  describe('many-to-many records', () => {
    it('an item carries at most 100 in ?expand= (the first by key), its keys all of them (150 labels: every one before)', async () => {
      const { body: widget } = await request(svc.app).post('/v/widgets/').send({ name: 'labelled' });
      const { body: other } = await request(svc.app).post('/v/widgets/').send({ name: 'labelled-too' });
      const labels = Array.from({ length: 150 }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        text: `l${i}`,
      }));
      await svc.database.db('labels').insert(labels);
      await svc.database.db('widgets_labels').insert(
        labels.flatMap((l) => [
          { widget_id: widget.id, label_id: l.id },
          { widget_id: other.id, label_id: l.id },
        ]),
      );
      const first = labels.slice(0, 100);
      const one = await request(svc.app).get(`/v/widgets/${widget.id}/?expand=labels`);
      expect([one.status, one.body.labels]).toEqual([200, first]);
      const page = await request(svc.app).get(`/v/widgets/?expand=labels&limit=20`);
      expect(page.status).toBe(200);
      const shown = (page.body.items as { id: number; labels: unknown[] }[]).filter((w) => w.id === widget.id || w.id === other.id);
      expect([page.status, shown.map((w) => w.labels)]).toEqual([200, [first, first]]);
      const keys = await request(svc.app).get(`/v/widgets/${widget.id}/`);
      expect([keys.status, keys.body.labels]).toEqual([200, labels.map((l) => l.id)]);
      // The relation's own route pages through all of them.
      const related = await request(svc.app).get(`/v/widgets/${widget.id}/labels/?page_size=8&page=19`);
      expect([related.status, related.body.count]).toEqual([200, 150]);
    });
  });

  describe('transactions', () => {
    it('past SVC_DB_TRANSACTION_TIMEOUT roll back and are answered 503, nothing written', async () => {
      const limited = showcaseOn(svc.database, { transactionTimeoutMs: 1 });
      try {
        const before = await svc.database.db('orders').count({ n: '*' });
        const res = await request(limited.app)
          .post('/v/orders/')
          .set(CLERK)
          .send({ customer: 'slow', lines: Array.from({ length: 50 }, (_, i) => ({ product: `s${i}` })) });
        expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '5', UNAVAILABLE]);
        expect(await svc.database.db('orders').count({ n: '*' })).toEqual(before);
        expect(await svc.database.db('order_lines').whereIn('product', ['S0', 'S49']).select('id')).toEqual([]);
        expect(limited.errors).toEqual([]);
      } finally {
        await limited.db.destroy();
      }
    });

    it('refuse the statement after the limit and send no COMMIT once it is past', async () => {
      const db = connect(svc.database.url, '', undefined, { ...DEFAULT_DATABASE_SETTINGS, transactionTimeoutMs: 300 });
      const gate = new TransactionGate();
      try {
        const name = (n: string) => ({ code: `tt-${n}`, title: n });
        await expect(
          gate.run(db, undefined, async (trx) => {
            await trx('makers').insert(name('a'));
            await sleep(400);
            await trx('makers').insert(name('b'));
          }),
        ).rejects.toBeInstanceOf(TransactionTimeoutError);
        await expect(
          gate.run(db, undefined, async (trx) => {
            await trx('makers').insert(name('c'));
            await sleep(400);
          }),
        ).rejects.toBeInstanceOf(TransactionTimeoutError);
        expect(await db('makers').whereIn('code', ['tt-a', 'tt-b', 'tt-c', 'tt-d']).select('code')).toEqual([]);
        // Within the limit, as before.
        await gate.run(db, undefined, (trx) => trx('makers').insert(name('d')));
        expect(await db('makers').whereIn('code', ['tt-a', 'tt-b', 'tt-c', 'tt-d']).select('code')).toEqual([{ code: 'tt-d' }]);
      } finally {
        await db.destroy();
      }
    });
  });

  (dialect === 'sqlite' ? it.skip : it)(
    'readiness answers 200 while long transactions hold every connection of the pool (503 before)',
    async () => {
      const limited = showcaseOn(svc.database, { poolMax: 2, acquireTimeoutMs: 500, connectTimeoutMs: 1000 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const holding = [0, 1].map(() =>
        limited.db.transaction(async (trx) => {
          await trx.raw('select 1');
          await held;
        }),
      );
      try {
        await sleep(200);
        const busy = await request(limited.app).get('/v/companies/');
        expect([busy.status, busy.body]).toEqual([503, UNAVAILABLE]);
        const started = Date.now();
        const ready = await request(limited.app).get('/v/health/ready');
        expect([ready.status, ready.body]).toEqual([200, { status: 'ok' }]);
        expect(Date.now() - started).toBeLessThan(1000);
      } finally {
        release();
        await Promise.all(holding);
        await limited.db.destroy();
      }
    },
  );

  (dialect === 'mysql' ? it : it.skip)('MariaDB ends a statement past SVC_DB_STATEMENT_TIMEOUT (none before), a 503', async () => {
    const db = connect(svc.database.url, '', undefined, { ...DEFAULT_DATABASE_SETTINGS, statementTimeoutMs: 300 });
    try {
      const started = Date.now();
      const err = await db
        .raw('select count(*) from information_schema.columns a, information_schema.columns b, information_schema.columns c')
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(Date.now() - started).toBeLessThan(3000);
      expect((err as { errno?: number }).errno).toBe(1969);
      expect(isConnectionFailure(err)).toBe(true);
    } finally {
      await db.destroy();
    }
  });
});
