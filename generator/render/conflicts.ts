/**
 * The constraints a service's 409s name when `SVC_NAMED_CONFLICTS` is on (the runtime's `Conflicts`,
 * printed into app.ts, so that the setting can be turned on at deploy time): each unique
 * constraint and index of a resource's table with the fields it holds, each foreign key that protects
 * its target (`on_delete: protect`) with the relation it is, by the names the migrations give them.
 */
import { constraintName } from '../migrate/steps';
import type { Resource, ServiceModel } from '../model/model';
import { literal } from '../model/names';
import { aOrAn, andList } from './english';

/** A field's name as the words of a sentence: `ticket_type` → `ticket type`. */
const words = (name: string) => name.replace(/_/g, ' ');

/** `A category with this name already exists.`, `A seat with this ticket type and row already exists.` */
function uniqueDetails(r: Resource, fields: string[]): string {
  const noun = aOrAn(r.verboseName);
  return `${noun[0].toUpperCase()}${noun.slice(1)} with this ${andList(fields.map(words))} already exists.`;
}

/** The `conflicts` of `createServiceContext`, as TypeScript, or undefined when no table has a constraint to name. */
export function conflictsLiteral(model: ServiceModel): string | undefined {
  const unique: { table: string; columns: string[]; name: string; details: string }[] = [];
  const protect: { table: string; column: string; name: string; target: string; details: string }[] = [];
  for (const r of model.resources) {
    const fieldOf = (column: string) => r.fields.find((f) => f.column === column)?.name ?? column;
    if (!r.pk.autoIncrement)
      unique.push({ table: r.table, columns: [r.pk.column], name: `${r.table}_pkey`, details: uniqueDetails(r, [r.pk.name]) });
    for (const f of r.fields) {
      if (f.unique && !f.primaryKey)
        unique.push({
          table: r.table,
          columns: [f.column],
          name: constraintName(r.table, [f.column], 'unique'),
          details: uniqueDetails(r, [f.name]),
        });
    }
    for (const i of r.indexes) {
      if (i.unique) unique.push({ table: r.table, columns: i.columns, name: i.name, details: uniqueDetails(r, i.columns.map(fieldOf)) });
    }
    for (const f of r.fields) {
      if (f.relation?.onDelete !== 'protect') continue;
      const target = model.resources.find((t) => t.table === f.relation!.targetTable);
      protect.push({
        table: r.table,
        column: f.column,
        name: constraintName(r.table, [f.column], 'foreign'),
        target: f.relation.targetTable,
        details: `Cannot delete this ${target?.verboseName ?? f.relation.target}: it is still the ${words(f.name)} of some ${r.verboseNamePlural}.`,
      });
    }
  }
  if (!unique.length && !protect.length) return undefined;
  return literal({ unique, protect });
}
