/** Stops the PgBouncer of setup.ts, after saying how many transactions it pooled (proof the suites went through it). */
import knex from 'knex';
import type { PgBouncer } from '../support/stack';

export default async function teardown(): Promise<void> {
  const bouncer = (globalThis as { svcgenPgBouncer?: PgBouncer }).svcgenPgBouncer;
  if (!bouncer) return;
  const admin = knex({ client: 'pg', connection: bouncer.url('pgbouncer'), pool: { min: 0, max: 1 } });
  try {
    const { rows } = await admin.raw('show stats');
    const total = (rows as { total_xact_count: string }[]).reduce((sum, r) => sum + Number(r.total_xact_count), 0);
    console.log(`PgBouncer pooled ${total} transactions`);
  } finally {
    await admin.destroy();
    bouncer.stop();
  }
}
