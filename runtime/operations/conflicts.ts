/**
 * Conflicts named, an opt-in (`SVC_NAMED_CONFLICTS`): a constraint violation answers the error
 * catalogue's 409, `{"error": "conflict", "details": "The request violates a database constraint."}`,
 * unless the setting is on; then its details say what conflicts when the service knows the
 * constraint — the fields of a unique constraint (`A category with this name already exists.`), the
 * relation that still holds rows of a protected delete (`Cannot delete this company: it is still the
 * maker of some widgets.`) — and the catalogue's text otherwise.
 *
 * The dialect adapter reads the constraint from its driver's error (`constraintOf`); the generated
 * code lists the constraints of its tables with their messages (`Conflicts`, in app.ts). SQLite does
 * not say which foreign key a delete broke, so `deleteRow` asks the tables that may still refer to
 * the row, on the same connection (a failed statement leaves SQLite's transaction usable).
 */
import type { Db } from '../db/connection';
import type { ConstraintViolation } from '../db/dialects/dialect';
import { constraintViolationOf } from '../db/driver-errors';
import { IntegrityError } from '../core/errors';
import type { Conflicts, ProtectConflict, RequestContext } from './types';

export type { Conflicts, ProtectConflict, UniqueConflict } from './types';

const sameColumns = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((c) => b.includes(c));

/** The details of the 409 of `violation`, when `conflicts` knows its constraint. */
export function conflictDetails(violation: ConstraintViolation, conflicts: Conflicts | undefined): string | undefined {
  if (!conflicts) return undefined;
  if (violation.kind === 'unique') {
    const found =
      (violation.constraint !== undefined ? conflicts.unique.find((u) => u.name === violation.constraint) : undefined) ??
      (violation.table !== undefined && violation.columns
        ? conflicts.unique.find((u) => u.table === violation.table && sameColumns(u.columns, violation.columns!))
        : undefined);
    return found?.details;
  }
  if (violation.kind === 'foreign_key' && violation.stillReferenced) {
    return conflicts.protect.find(
      (p) => p.name === violation.constraint || (p.table === violation.table && violation.constraint === undefined),
    )?.details;
  }
  return undefined;
}

/** The 409 of a driver's constraint violation: named when the service knows the constraint. */
export function integrityError(err: unknown, conflicts: Conflicts | undefined): IntegrityError {
  const violation = constraintViolationOf(err);
  const details = violation ? conflictDetails(violation, conflicts) : undefined;
  return new IntegrityError(err, details);
}

/**
 * Deletes the row of `table` whose `pk` is `key`. When a foreign key that protects it refuses the
 * delete and the driver did not say which (SQLite), the first table that still refers to the row
 * names the 409; otherwise the error goes on as the driver threw it.
 */
export async function deleteRow(ctx: RequestContext, table: string, pk: string, key: unknown): Promise<void> {
  try {
    await ctx
      .db(table)
      .where(pk, key as any)
      .delete();
  } catch (err) {
    const violation = constraintViolationOf(err);
    if (violation?.kind !== 'foreign_key' || violation.constraint !== undefined || violation.stillReferenced === false) throw err;
    const holder = await referringTable(ctx.db, ctx.service.conflicts, table, key).catch(() => undefined);
    if (holder) throw new IntegrityError(err, holder.details);
    throw err;
  }
}

/** The first protecting foreign key whose table still holds a row referring to `key` of `table`. */
async function referringTable(db: Db, conflicts: Conflicts | undefined, table: string, key: unknown): Promise<ProtectConflict | undefined> {
  for (const p of conflicts?.protect ?? []) {
    if (p.target !== table) continue;
    if (
      await db(p.table)
        .select(p.column)
        .where(p.column, key as any)
        .first()
    )
      return p;
  }
  return undefined;
}
