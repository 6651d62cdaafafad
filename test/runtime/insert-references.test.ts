/**
 * A create's insert that checks the rows it refers to in its own statement, on real databases:
 * `insertWhereReferencesExist` writes and returns the row when each related row exists, and writes
 * nothing (no constraint error: the transaction goes on) when one is missing; an insert that is not
 * one row of values is left to the caller. `rowLookup().insertRow` then answers the 404 of the first
 * missing reference in the order given, as checking each before the insert does. The same answers on every database.
 */
import type { Knex } from 'knex';
import { rowLookup, type InsertReference, type ModelInfo, type RequestContext, type ServiceContext } from '../../runtime';
import { dialectOf, insertWhereReferencesExist, type Db } from '../../runtime/db/connection';
import { NotFoundError } from '../../runtime/core/errors';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { insertReturning } from '../../runtime/db/inserts';

const MAKER: ModelInfo = { verboseKey: 'maker', classKey: 'maker' };
const WIDGET: ModelInfo = { verboseKey: 'widget', classKey: 'widget' };

interface PartRow {
  id: number;
  name: string;
  flag: boolean | number;
  maker_code: string | null;
  widget_id: number | null;
}

describe.each(DIALECTS)('insert checking its references (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  let widget: number;
  const statements: string[] = [];
  const record = (q: { sql: string }) => statements.push(q.sql);

  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('makers', (t) => {
      t.string('code', 16).primary();
    });
    await db.schema.createTable('widgets', (t) => {
      t.increments('id');
    });
    await db.schema.createTable('parts', (t) => {
      t.increments('id');
      t.string('name').notNullable().unique();
      t.boolean('flag').notNullable().defaultTo(false);
      t.string('maker_code', 16).nullable().references('code').inTable('makers');
      t.integer('widget_id').nullable().references('id').inTable('widgets');
    });
    await db('makers').insert({ code: 'acme' });
    [widget] = (await insertReturning(db, db('widgets').insert({}), {}, ['id'])).map((r) => r.id as number);
    db.on('query', record);
  });
  afterAll(async () => {
    db.off('query', record);
    await database?.drop();
  });
  beforeEach(() => {
    statements.length = 0;
  });

  const refs = (maker: unknown, widgetId: unknown) => [
    { table: 'makers', pk: 'code', key: maker },
    { table: 'widgets', pk: 'id', key: widgetId },
  ];
  const insert = (trx: Knex, values: Partial<PartRow>) =>
    dialectOf(trx).returning(
      trx('parts').insert(values),
      values,
      dialectOf(trx).insertReturnsRows ? ['id', 'name', 'flag', 'maker_code', 'widget_id'] : ['id'],
    );
  const create2 = (name: string) =>
    db.transaction((trx) => insertWhereReferencesExist(trx, insert(trx, { name }), [{ table: 'makers', pk: 'code', key: 'acme' }]));
  const names = async () => (await db('parts').select('name').orderBy('name')).map((r: { name: string }) => r.name);

  it('writes the row, in one statement, when each row it refers to exists, and answers it', async () => {
    const rows = await db.transaction((trx) =>
      insertWhereReferencesExist(trx, insert(trx, { name: 'both', maker_code: 'acme', widget_id: widget }), refs('acme', widget)),
    );
    expect(rows).toHaveLength(1);
    expect(rows![0].id).toEqual(expect.any(Number));
    if (dialectOf(db).insertReturnsRows)
      expect({ ...rows![0], flag: Boolean(rows![0].flag) }).toEqual({
        id: rows![0].id,
        name: 'both',
        flag: false,
        maker_code: 'acme',
        widget_id: widget,
      });
    const inserts = statements.filter((s) => /^insert/i.test(s));
    expect(inserts).toHaveLength(1);
    expect(inserts[0]).toMatch(/^insert into .* select .* where exists \(select 1 from .* and exists \(select 1 from /);
    expect(statements.filter((s) => /^select/i.test(s))).toEqual([]);
    expect(await db('parts').where('name', 'both').first()).toMatchObject({
      maker_code: 'acme',
      widget_id: widget,
    });
  });

  it('writes nothing when one is missing, raises no error, and the transaction goes on', async () => {
    await db.transaction(async (trx) => {
      expect(
        await insertWhereReferencesExist(
          trx,
          insert(trx, {
            name: 'no maker',
            maker_code: 'nobody',
            widget_id: widget,
          }),
          refs('nobody', widget),
        ),
      ).toEqual([]);
      expect(
        await insertWhereReferencesExist(
          trx,
          insert(trx, {
            name: 'no widget',
            maker_code: 'acme',
            widget_id: 999999,
          }),
          refs('acme', 999999),
        ),
      ).toEqual([]);
      // Missing and unique at once: nothing is written, so the unique value is never compared.
      expect(
        await insertWhereReferencesExist(trx, insert(trx, { name: 'both', maker_code: 'nobody' }), [
          { table: 'makers', pk: 'code', key: 'nobody' },
        ]),
      ).toEqual([]);
      expect(
        await insertWhereReferencesExist(trx, insert(trx, { name: 'after', maker_code: 'acme' }), [
          { table: 'makers', pk: 'code', key: 'acme' },
        ]),
      ).toHaveLength(1);
    });
    expect(await names()).toEqual(['after', 'both']);
  });

  it('binds every value of each new shape: a flag true then false, a null key', async () => {
    await db.transaction(async (trx) => {
      for (const [name, flag] of [
        ['on', true],
        ['off', false],
        ['on again', true],
      ] as const) {
        expect(
          await insertWhereReferencesExist(trx, insert(trx, { name, flag, maker_code: 'acme', widget_id: null }), [
            { table: 'makers', pk: 'code', key: 'acme' },
          ]),
        ).toHaveLength(1);
      }
    });
    const flags = await db('parts').select('name', 'flag', 'widget_id').whereIn('name', ['on', 'off', 'on again']).orderBy('name');
    expect(
      flags.map((r: PartRow) => ({
        name: r.name,
        flag: Boolean(r.flag),
        widget_id: r.widget_id,
      })),
    ).toEqual([
      { name: 'off', flag: false, widget_id: null },
      { name: 'on', flag: true, widget_id: null },
      { name: 'on again', flag: true, widget_id: null },
    ]);
  });

  it("runs in the transaction and fails as through Knex: a unique value taken is the driver's constraint error", async () => {
    await create2('taken');
    const err = await db
      .transaction((trx) =>
        insertWhereReferencesExist(trx, insert(trx, { name: 'taken', maker_code: 'acme' }), [{ table: 'makers', pk: 'code', key: 'acme' }]),
      )
      .catch((e: unknown) => e);
    const violation = dialectOf(db).constraintOf(err as Error);
    expect(violation?.kind).toBe('unique');
    // SQLite and PostgreSQL name the columns; MySQL names the index, which the service's conflicts map to them.
    expect(violation?.columns ?? [violation?.constraint]).toEqual([expect.stringContaining('name')]);
    // Reported to the listeners, as Knex reports its statements.
    expect(statements.filter((s) => /^insert/i.test(s))).toHaveLength(2);
    expect(await names()).toContain('taken');
  });

  it('leaves an insert that is not one row of values to the caller: undefined, nothing run', async () => {
    const several = db('parts').insert([
      { name: 'r1', maker_code: 'acme' },
      { name: 'r2', maker_code: 'acme' },
    ]);
    expect(await insertWhereReferencesExist(db, several, [{ table: 'makers', pk: 'code', key: 'acme' }])).toBeUndefined();
    expect(statements).toEqual([]);
    expect(await names()).not.toContain('r1');
  });

  describe('rowLookup().insertRow', () => {
    const service = {
      model: (m: ModelInfo) => ({ notFoundKey: m.verboseKey }),
    } as unknown as ServiceContext;
    const lookup = rowLookup<PartRow>({
      table: 'parts',
      pk: 'id',
      model: { notFoundKey: 'part' },
    });
    const create = (values: Partial<PartRow>, references: InsertReference[]) =>
      db.transaction((trx) =>
        lookup.insertRow(
          {
            db: trx,
            service,
            req: {},
            user: undefined,
          } as unknown as RequestContext,
          values,
          ['id', 'name'],
          { references },
        ),
      );
    const named = (maker: unknown, widgetId: unknown): InsertReference[] => [
      { table: 'makers', pk: 'code', key: maker, model: MAKER },
      { table: 'widgets', pk: 'id', key: widgetId, model: WIDGET },
    ];

    it('answers the row when each reference exists, and skips the keys a body leaves null or out', async () => {
      expect(await create({ name: 'lookup', maker_code: 'acme', widget_id: widget }, named('acme', widget))).toMatchObject({
        name: 'lookup',
      });
      expect(await create({ name: 'lookup null' }, named(null, undefined))).toMatchObject({ name: 'lookup null' });
      // No key named: a plain insert, without a check.
      expect(statements.filter((s) => /exists/.test(s))).toHaveLength(1);
    });

    it('answers the 404 of the first missing reference in their order, and writes nothing', async () => {
      const failure = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (err: unknown) => err,
        );
      for (const [values, references, key] of [
        [{ name: 'x1', maker_code: 'nobody', widget_id: 999999 }, named('nobody', 999999), 'maker'],
        [{ name: 'x2', maker_code: 'acme', widget_id: 999999 }, named('acme', 999999), 'widget'],
        [{ name: 'x3', maker_code: 'nobody', widget_id: widget }, named('nobody', widget), 'maker'],
        [{ name: 'x4', maker_code: 'nobody', widget_id: 999999 }, [...named('nobody', 999999)].reverse(), 'widget'],
      ] as const) {
        const err = await failure(create(values, references));
        expect(err).toBeInstanceOf(NotFoundError);
        expect((err as NotFoundError).error).toEqual({ [key]: 'not found' });
      }
      expect((await names()).filter((n) => n.startsWith('x'))).toEqual([]);
    });
  });
});
