/**
 * The viewset's `normalize_input` hook: given the body of a create or update as received, before
 * validation, it returns the body to validate: an ISBN sent with dashes and spaces loses them
 * before `max_length` counts them, and what it leaves invalid is still the seed's 422. Real SQLite
 * and PostgreSQL.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { loadSettings, migrateLatest } from '../../runtime';
import { build, libraryWorkspace, loadService, type LibraryWorkspace, type LoadedService } from '../migrations/helpers';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';

const BOOKS = `model: Book
verbose_name: book
verbose_name_plural: books
hooks: hooks/books.ts
fields:
  title: {type: string, max_length: 200}
  isbn: {type: string, max_length: 13, unique: true}
viewset:
  auth: null
  normalize_input: tidyBook
`;

const HOOKS = `/** ISBNs are stored as 13 digits: the dashes and spaces people type are dropped before validation. */
export function tidyBook({ body, operation }: { body: unknown; operation: 'create' | 'update' }): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const data = body as Record<string, unknown>;
  if (typeof data.isbn === 'string') data.isbn = data.isbn.replace(/[-\\s]/g, '');
  if (operation === 'create' && typeof data.title === 'string') return { ...data, title: data.title.trim() };
  return undefined;
}
`;

let ws: LibraryWorkspace;
let service: LoadedService;

beforeAll(async () => {
  ws = libraryWorkspace('normalize');
  ws.write({ 'books.yaml': BOOKS });
  fs.mkdirSync(path.join(ws.specs, 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(ws.specs, 'hooks', 'books.ts'), HOOKS);
  await build(ws);
  service = loadService(ws);
});
afterAll(() => ws.remove());

describe.each(DIALECTS)('normalize_input (%s)', (dialect) => {
  let database: TestDatabase;
  let app: ReturnType<LoadedService['createService']>['app'];
  beforeAll(async () => {
    database = await createDatabase(dialect);
    await migrateLatest(database.db, service.migrations);
    app = service.createService({ db: database.db, keys: testKeys(), settings: loadSettings(service.defaults, {}, {}) }).app;
  });
  afterAll(() => database.drop());

  it('create: an ISBN with dashes fits max_length once the hook has dropped them', async () => {
    const res = await request(app).post('/api/books/').send({ title: '  Dune ', isbn: '978-0-441-17271-9' });
    expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { id: 1, title: 'Dune', isbn: '9780441172719' } });
  });

  it('update: the hook runs too (told which operation it serves)', async () => {
    const res = await request(app).patch('/api/books/1/').send({ isbn: '978 0 441 17271 8', title: ' kept ' });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { id: 1, title: ' kept ', isbn: '9780441172718' } });
  });

  it('what the hook leaves invalid is still a 422 in the seed shape; a body that is not an object reaches validation as sent', async () => {
    const long = await request(app).post('/api/books/').send({ title: 'Long', isbn: '978-0-441-17271-9-0' });
    expect({ status: long.status, body: long.body }).toEqual({
      status: 422,
      body: { detail: [{ type: 'string_too_long', loc: ['body', 'data', 'isbn'], msg: 'String should have at most 13 characters' }] },
    });
    const list = await request(app).post('/api/books/').send([1, 2]);
    expect(list.status).toBe(422);
  });
});
