/** Stops the PgBouncer of setup.ts, after saying how many transactions it pooled (proof the suites went through it). */
import { Client } from 'pg';
import type { PgBouncer } from '../support/stack';

export default async function teardown(): Promise<void> {
  const bouncer = (globalThis as { svcgenPgBouncer?: PgBouncer }).svcgenPgBouncer;
  if (!bouncer) return;
  // PgBouncer's console answers its own commands only (not Knex's `select version()`): the driver alone.
  const admin = new Client({ connectionString: bouncer.url('pgbouncer') });
  try {
    await admin.connect();
    const { rows } = await admin.query('SHOW STATS');
    const total = (rows as { total_xact_count: string }[]).reduce((sum, r) => sum + Number(r.total_xact_count), 0);
    console.log(`PgBouncer pooled ${total} transactions`);
  } finally {
    await admin.end().catch(() => undefined);
    bouncer.stop();
  }
}
