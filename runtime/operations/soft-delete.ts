/**
 * Soft delete (`soft_delete` of a viewset, ninja-aio-crud's `SoftDeleteViewSetMixin`): DELETE stamps
 * the row's deleted-at column instead of removing it, and every lookup of the resource's routes
 * hides stamped rows (`rowLookup` with `softDelete`). A restore clears the stamp; a hard delete
 * removes the row for good.
 *
 * Unique fields and unique indexes of such a resource are partial unique indexes over the live rows
 * (`WHERE deleted_at IS NULL`, on SQLite and PostgreSQL), so a deleted row does not keep its values
 * from new rows. Restoring a row whose value a live row has taken since would break such an index:
 * `restoreRow` answers that with a 409 naming the fields, before the database would.
 */
import type { Db } from '../db/connection';
import { now } from '../core/convert';
import { ApiException } from '../core/errors';
import type { Row } from '../db/rows';

export interface SoftDeleteSpec {
  table: string;
  pk: string;
  /** The column that marks a deleted row: NULL while the row lives. */
  column: string;
  /** The columns unique among live rows, with the field names a conflict shows. */
  uniques: readonly { fields: readonly string[]; columns: readonly string[] }[];
  /** How a conflict names the model: its verbose name. */
  label: string;
}

/** A restore that would repeat a unique value of a live row (409): `{"error": "conflict", "details": "..."}`. */
export class RestoreConflictError extends ApiException {
  static override status_code = 409;
  constructor(label: string, fields: readonly string[]) {
    super('conflict', 409, restoreConflictMessage(label, fields));
  }
}

/** `Cannot restore this tag: a live tag has the same name.` */
export function restoreConflictMessage(label: string, fields: readonly string[]): string {
  const named = fields.length === 1 ? fields[0] : `${fields.slice(0, -1).join(', ')} and ${fields[fields.length - 1]}`;
  return `Cannot restore this ${label}: a live ${label} has the same ${named}.`;
}

/** Marks the row with this key deleted, now. */
export async function markDeleted(db: Db, spec: SoftDeleteSpec, key: unknown): Promise<void> {
  await db(spec.table)
    .where(spec.pk, key as any)
    .update({ [spec.column]: now() });
}

/**
 * Brings back a soft-deleted row (`row`, locked by the restore: its key and unique columns at
 * least). A live row holding the same values of a unique field or index is a 409; NULLs never clash.
 */
export async function restoreRow(db: Db, spec: SoftDeleteSpec, row: Row): Promise<void> {
  const key = row[spec.pk];
  for (const unique of spec.uniques) {
    const values = unique.columns.map((c) => row[c]);
    if (values.some((v) => v === null || v === undefined)) continue;
    const query = db(spec.table).select(spec.pk).whereNull(spec.column).whereNot(spec.pk, key);
    unique.columns.forEach((c, i) => query.where(c, values[i]));
    if (await query.first()) throw new RestoreConflictError(spec.label, unique.fields);
  }
  await db(spec.table)
    .where(spec.pk, key)
    .update({ [spec.column]: null });
}
