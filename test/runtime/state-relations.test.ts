/**
 * A create's ETag without reading its relations again, on real databases: `insertRow` with
 * `relations` has the insert return the related records of its foreign keys (a subquery each, the
 * related table under an alias of its own, so a row may refer to its own table), and the row has
 * no children yet; `stateETag` then hashes the state from them. The ETag is the one a read of the
 * committed row gives, with a key named or null, and where the insert returns no rows (MySQL) the
 * relations are read as before.
 *
 * A retrieve reading its relations with its row: `findVisible` with `relations` joins the related
 * records of the foreign keys, and on a server the first many-to-many relation, into the row's
 * statement, and the `loadRelations` that shapes the row reads only the others. The representation
 * is the one loading every relation gives.
 */
import type { Knex } from 'knex';
import { NotFoundError } from '../../runtime/core/errors';
import { etagOf } from '../../runtime/operations/conditional';
import {
  loadRelations,
  rowLookup,
  type ForeignSpec,
  type ManyToManySpec,
  type ModelInfo,
  type RequestContext,
  type ServiceContext,
  type StateRelations,
} from '../../runtime';
import { dialectOf, type Db } from '../../runtime/db/connection';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { insertReturning } from '../../runtime/db/inserts';

interface NodeRow {
  id: number;
  name: string;
  done: boolean | number;
  maker_code: string | null;
  parent_id: number | null;
}

const MAKER = {
  table: 'makers',
  pk: 'code',
  columns: ['code', 'label'],
  shape: (row) => ({ code: row.code, label: row.label }),
} satisfies ForeignSpec<unknown>;
const PARENT = {
  table: 'nodes',
  pk: 'id',
  columns: ['id', 'name', 'done'],
  shape: (row) => ({ id: row.id, name: row.name, done: Boolean(row.done) }),
} satisfies ForeignSpec<unknown>;
const LABELS = {
  joinTable: 'nodes_labels',
  ownColumn: 'node_id',
  otherColumn: 'label_id',
  table: 'labels',
  pk: 'id',
  columns: ['id', 'text'],
  shape: (row) => ({ id: row.id, text: row.text }),
} satisfies ManyToManySpec<unknown>;

const COLUMNS: (keyof NodeRow)[] = ['id', 'name', 'done', 'maker_code', 'parent_id'];
const RELATIONS: StateRelations<NodeRow> = {
  foreign: [
    [MAKER, 'maker_code'],
    [PARENT, 'parent_id'],
  ],
  children: [LABELS],
};

/** The representation of nodes: the maker and parent nested, the labels listed. */
async function shapeNode(db: Db, rows: NodeRow[]) {
  const [maker, parent, labels] = await loadRelations(
    db,
    [
      [MAKER, rows.map((row) => row.maker_code)],
      [PARENT, rows.map((row) => row.parent_id)],
      [LABELS, rows.map((row) => row.id)],
    ],
    rows,
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    done: Boolean(row.done),
    maker: row.maker_code === null ? null : (maker.get(row.maker_code) ?? null),
    parent: row.parent_id === null ? null : (parent.get(row.parent_id) ?? null),
    labels: labels.get(row.id) ?? [],
  }));
}

describe.each(DIALECTS)('a create reading its state with its insert (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  let root: number;
  const statements: string[] = [];
  const record = (q: { sql: string }) => statements.push(q.sql);

  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('makers', (t) => {
      t.string('code', 16).primary();
      t.string('label').notNullable();
    });
    await db.schema.createTable('nodes', (t) => {
      t.increments('id');
      t.string('name').notNullable();
      t.boolean('done').notNullable().defaultTo(false);
      t.string('maker_code', 16).nullable().references('code').inTable('makers');
      t.integer('parent_id').nullable().references('id').inTable('nodes');
    });
    await db.schema.createTable('labels', (t) => {
      t.increments('id');
      t.string('text').notNullable();
    });
    await db.schema.createTable('nodes_labels', (t) => {
      t.integer('node_id').notNullable().references('id').inTable('nodes').onDelete('CASCADE');
      t.integer('label_id').notNullable().references('id').inTable('labels').onDelete('CASCADE');
    });
    await db('makers').insert({ code: 'acme', label: 'Acme "Works"' });
    await db('nodes').insert({ name: 'root', done: true });
    root = (await db('nodes').where('name', 'root').first()).id;
    const [label] = await insertReturning(db, db('labels').insert({ text: 'red' }), { text: 'red' }, ['id']);
    await db('nodes_labels').insert({ node_id: root, label_id: label.id });
    db.on('query', record);
  });
  afterAll(async () => {
    db.off('query', record);
    await database?.drop();
  });
  beforeEach(() => {
    statements.length = 0;
  });

  const service = { model: (m: ModelInfo) => ({ notFoundKey: m.verboseKey }) } as unknown as ServiceContext;
  const lookup = rowLookup<NodeRow>({
    table: 'nodes',
    pk: 'id',
    model: { notFoundKey: 'node' },
    state: { columns: COLUMNS, shape: shapeNode },
  });

  /** Creates a node in a transaction; answers the row, the ETag of its state and the statements run after its insert. */
  async function create(values: Partial<NodeRow>, relations?: StateRelations<NodeRow>) {
    return db.transaction(async (trx) => {
      const ctx = { db: trx, service, req: {}, user: undefined } as unknown as RequestContext;
      const row = await lookup.insertRow(ctx, values, ['id', 'name'], { relations });
      const inserted = statements.findIndex((s) => /^insert/i.test(s));
      const etag = await lookup.stateETag(ctx, row.id);
      return { row, etag, after: statements.slice(inserted + 1) };
    });
  }
  /** The ETag of the committed row, its relations read. */
  const newNode = async (values: Record<string, unknown>) =>
    (await insertReturning(db, db('nodes').insert(values), values, ['id']))[0].id as number;
  const readETag = async (id: number) => etagOf((await shapeNode(db, [await db('nodes').select(COLUMNS).where('id', id).first()]))[0]);

  it('hashes the state the committed row has, with the related records the insert returned', async () => {
    const { row, etag, after } = await create({ name: 'child', maker_code: 'acme', parent_id: root }, RELATIONS);
    // The row answered is the row alone: the columns the relations were read with are taken off it.
    expect(Object.keys(row).sort()).toEqual(COLUMNS.slice().sort());
    expect(etag).toBe(await readETag(row.id));
    const [state] = await shapeNode(db, [await db('nodes').select(COLUMNS).where('id', row.id).first()]);
    expect(state).toEqual({
      id: row.id,
      name: 'child',
      done: false,
      maker: { code: 'acme', label: 'Acme "Works"' },
      parent: { id: root, name: 'root', done: true },
      labels: [],
    });
    if (dialectOf(db).insertReturnsRows) {
      // Nothing read after the insert: its statement returned the maker and the parent (a subquery
      // on the table written, under an alias); the new row has no labels yet.
      expect(after.filter((s) => /^select/i.test(s))).toEqual([]);
      expect(statements.find((s) => /^insert/i.test(s))).toMatch(
        / returning .*\(select .* from .?nodes.? as .?__r1.? where .?__r1.?\..?id.? = .?nodes.?\..?parent_id.?\)/,
      );
    } else {
      // No RETURNING: the row is read again, and its relations with it.
      expect(after.filter((s) => /^select/i.test(s)).length).toBeGreaterThan(0);
    }
  });

  it('hashes the same state for keys left null, and for a create without relations, which reads them', async () => {
    const bare = await create({ name: 'bare' }, RELATIONS);
    expect(bare.etag).toBe(await readETag(bare.row.id));
    if (dialectOf(db).insertReturnsRows) expect(bare.after.filter((s) => /^select/i.test(s))).toEqual([]);
    const plain = await create({ name: 'plain', maker_code: 'acme', parent_id: root });
    expect(plain.etag).toBe(await readETag(plain.row.id));
    expect(plain.after.filter((s) => /^select/i.test(s)).length).toBeGreaterThan(0);
  });

  it('answers the loads it knows only while the state is shaped: a later read of the same relations queries them', async () => {
    const { row } = await create({ name: 'later', parent_id: root }, RELATIONS);
    await db('nodes_labels').insert({ node_id: row.id, label_id: (await db('labels').first()).id });
    statements.length = 0;
    const [state] = await shapeNode(db, [await db('nodes').select(COLUMNS).where('id', row.id).first()]);
    expect(state.labels).toEqual([{ id: expect.any(Number), text: 'red' }]);
    expect(statements.filter((s) => /labels/.test(s)).length).toBeGreaterThan(0);
  });

  describe('a retrieve reading the relations of its representation with its row', () => {
    const selects = () => statements.filter((sql) => /^select/i.test(sql));
    /** Hides rows named `hidden`, as a queryset_request hook does; with `more`, with a join or a column of its own too. */
    const narrowed = (more?: 'join' | 'select') =>
      rowLookup<NodeRow>({
        table: 'nodes',
        pk: 'id',
        model: { notFoundKey: 'node' },
        narrow: (_ctx, query: Knex.QueryBuilder) => {
          query.whereNot('nodes.name', 'hidden');
          if (more === 'join') query.leftJoin('makers as made_by', 'made_by.code', 'nodes.maker_code');
          if (more === 'select') query.select('nodes.*');
        },
      });
    const ctx = () => ({ db, service, req: {}, user: undefined }) as unknown as RequestContext;
    /** The representation as `findVisible` with the relations reads and shapes it, and the SELECTs that took. */
    async function retrieve(id: number, lookup = narrowed()) {
      statements.length = 0;
      const row = await lookup.findVisible(ctx(), id, COLUMNS, RELATIONS);
      const [item] = await shapeNode(db, [row]);
      return { row, item, selects: selects() };
    }
    /** The representation loading every relation, from the row read alone. */
    const loaded = async (id: number) => (await shapeNode(db, [await db('nodes').select(COLUMNS).where('id', id).first()]))[0];
    const labelIds: number[] = [];

    beforeAll(async () => {
      // Labels whose keys are not in the order they are linked: the list is ordered by key.
      for (const text of ['blue', 'green', 'amber']) {
        const [made] = await insertReturning(db, db('labels').insert({ text }), { text }, ['id']);
        labelIds.push(made.id);
      }
    });

    it('reads the row, its maker and parent, and on a server its labels, in one statement', async () => {
      const id = await newNode({ name: 'full', maker_code: 'acme', parent_id: root });
      for (const label of [...labelIds].reverse()) await db('nodes_labels').insert({ node_id: id, label_id: label });
      const { row, item, selects } = await retrieve(id);
      // The row's columns, as a read of the row alone answers them (the related records' come after them).
      expect(Object.keys(row).slice(0, COLUMNS.length)).toEqual(COLUMNS);
      expect(Object.fromEntries(COLUMNS.map((c) => [c, row[c]]))).toEqual(await db('nodes').select(COLUMNS).where('id', id).first());
      expect(item).toEqual(await loaded(id));
      expect(item.labels.map((l) => l.id)).toEqual([...labelIds].sort((a, b) => a - b));
      expect(item.maker).toEqual({ code: 'acme', label: 'Acme "Works"' });
      // One statement on a server; SQLite reads the labels with a statement of their own.
      expect(selects).toHaveLength(dialectOf(db).joinsManyToMany ? 1 : 2);
      expect(selects[0]).toMatch(/ left join .?makers.? as /);
    });

    it('gives the representation loading gives for keys left null, no labels, and its own table as parent', async () => {
      const bare = await newNode({ name: 'bare' });
      const child = await newNode({ name: 'child of bare', parent_id: bare });
      for (const id of [bare, child, root]) {
        const { item, selects } = await retrieve(id);
        expect(item).toEqual(await loaded(id));
        expect(selects).toHaveLength(dialectOf(db).joinsManyToMany ? 1 : 2);
      }
      expect((await retrieve(child)).item.parent).toEqual({ id: bare, name: 'bare', done: false });
    });

    it('answers 404 for a row the hook hides or none has, and reads as before when the hook joins', async () => {
      const hidden = await newNode({ name: 'hidden', maker_code: 'acme' });
      await expect(retrieve(hidden)).rejects.toBeInstanceOf(NotFoundError);
      await expect(retrieve(hidden, narrowed('join'))).rejects.toBeInstanceOf(NotFoundError);
      await expect(retrieve(999999)).rejects.toBeInstanceOf(NotFoundError);
      // A query with a join of its own may answer a row more than once, one with columns of its own
      // names them twice: nothing is joined to either.
      for (const more of ['join', 'select'] as const) {
        const { item, selects } = await retrieve(root, narrowed(more));
        expect(item).toEqual(await loaded(root));
        expect(selects[0]).not.toMatch(/__r0/);
        expect(selects.length).toBeGreaterThan(1);
      }
    });

    it('reads the relations of a row whose key names no record as those of any other row', async () => {
      // A maker looked up by its label: the join finds none for the code the row holds.
      const byLabel = { ...MAKER, pk: 'label' } satisfies ForeignSpec<unknown>;
      const relations: StateRelations<NodeRow> = { foreign: [[byLabel, 'maker_code']], children: [] };
      const id = await newNode({ name: 'dangling', maker_code: 'acme' });
      const row = await narrowed().findVisible(ctx(), id, COLUMNS, relations);
      statements.length = 0;
      const [maker] = await loadRelations(db, [[byLabel, [row.maker_code]]], [row]);
      expect(maker.size).toBe(0);
      expect(selects()).toHaveLength(1);
    });
  });
});
