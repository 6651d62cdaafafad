/**
 * A create's ETag without reading its relations again, on real databases: `insertRow` with
 * `relations` has the insert return the related records of its foreign keys (a subquery each, the
 * related table under an alias of its own, so a row may refer to its own table), and the row has
 * no children yet; `stateETag` then hashes the state from them. The ETag is the one a read of the
 * committed row gives, with a key named or null, and where the insert returns no rows (MySQL) the
 * relations are read as before.
 */
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
  const [maker, parent, labels] = await loadRelations(db, [
    [MAKER, rows.map((row) => row.maker_code)],
    [PARENT, rows.map((row) => row.parent_id)],
    [LABELS, rows.map((row) => row.id)],
  ]);
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
    const label = (await db('labels').insert({ text: 'red' }).returning('id'))[0];
    await db('nodes_labels').insert({ node_id: root, label_id: typeof label === 'object' ? label.id : label });
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
});
