/**
 * Computed output fields (a read section's `customs`, as ninja-aio-crud's): a hook of the resource's
 * hooks module computes the value of each row from its record when the response is shaped.
 */
import type { Db } from '../db/connection';

/** What the hook of a computed field receives: the row as the resource's record, and the database. */
export interface ComputeArgs<R> {
  instance: R;
  db: Db;
}
