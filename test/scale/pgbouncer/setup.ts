/**
 * Global setup of the HTTP suites run through PgBouncer (jest.pgbouncer.config.js): PgBouncer in
 * transaction mode in front of the PostgreSQL server the suites use, the suites on PostgreSQL only,
 * their services connected through PgBouncer (databases are created and dropped on the server).
 */
import { PgBouncer } from '../support/stack';

export default async function setup(): Promise<void> {
  const bouncer = await PgBouncer.start(
    { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432) },
    { poolSize: 40 },
  );
  process.env.SVCGEN_TEST_DATABASES = 'postgres';
  process.env.SVCGEN_TEST_PG_SERVE_PORT = String(bouncer.port);
  (globalThis as { svcgenPgBouncer?: PgBouncer }).svcgenPgBouncer = bouncer;
  console.log(`\nPgBouncer (transaction mode) on port ${bouncer.port}`);
}
