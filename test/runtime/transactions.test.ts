/**
 * The transaction gate a shutdown drives (runtime/operations/transactions.ts): a request holds its
 * transaction until its response closes, a transaction begun after `refuse()` writes nothing and
 * is a 503, one whose work ends after `abort()` rolls back, and one past that point commits.
 */
import { EventEmitter } from 'node:events';
import { ServiceUnavailableError } from '../../runtime/core/errors';
import { TransactionGate } from '../../runtime/operations/transactions';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

describe.each(DIALECTS)('TransactionGate (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    await database.db.schema.createTable('notes', (t) => t.string('text'));
  });
  afterAll(() => database.drop());
  beforeEach(() => database.db('notes').del());

  const db = () => database.db;
  const texts = async () => (await db()('notes').pluck('text')).sort();
  /** A request whose response is open until `close()`. */
  const request = () => {
    const res = Object.assign(new EventEmitter(), { closed: false });
    return { req: { res }, close: () => ((res.closed = true), res.emit('close')) };
  };

  it('holds a request from the start of its transaction until its response closes: open, then committing', async () => {
    const gate = new TransactionGate();
    const { req, close } = request();
    const seen: unknown[] = [];
    await gate.run(db(), req, async (trx) => {
      seen.push(gate.holding(req));
      await trx('notes').insert({ text: 'kept' });
    });
    seen.push(gate.holding(req));
    close();
    seen.push(gate.holding(req));
    expect(seen).toEqual(['open', 'committing', undefined]);
    expect(await texts()).toEqual(['kept']);
  });

  it('after refuse(): a transaction that begins is a 503 and writes nothing; one already running commits', async () => {
    const gate = new TransactionGate();
    const running = request();
    let proceed!: () => void;
    const wait = new Promise<void>((resolve) => (proceed = resolve));
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    const first = gate.run(db(), running.req, async (trx) => {
      await trx('notes').insert({ text: 'running' });
      begun();
      await wait;
    });
    await started;
    gate.refuse();
    proceed();
    await first;
    const late = request();
    const refused = gate.run(db(), late.req, (trx) => trx('notes').insert({ text: 'late' }));
    await expect(refused).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(gate.holding(late.req)).toBeUndefined();
    expect(await texts()).toEqual(['running']);
  });

  it('after abort(): a transaction whose work ends rolls back (503); nothing of it is written', async () => {
    const gate = new TransactionGate();
    const { req } = request();
    let proceed!: () => void;
    const wait = new Promise<void>((resolve) => (proceed = resolve));
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    const run = gate.run(db(), req, async (trx) => {
      await trx('notes').insert({ text: 'aborted' });
      begun();
      await wait;
    });
    await started;
    gate.refuse();
    gate.abort();
    expect(gate.holding(req)).toBe('open');
    proceed();
    await expect(run).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(await texts()).toEqual([]);
  });

  it('without a request (or with its response already closed), the hold ends with the transaction', async () => {
    const gate = new TransactionGate();
    const { req, close } = request();
    close();
    await gate.run(db(), req, (trx) => trx('notes').insert({ text: 'a' }));
    await gate.run(db(), undefined, (trx) => trx('notes').insert({ text: 'b' }));
    expect(gate.holding(req)).toBeUndefined();
    expect(await texts()).toEqual(['a', 'b']);
  });
});
