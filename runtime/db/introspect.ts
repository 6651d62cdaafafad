/**
 * What `svcgen pull` reads of an existing database: every table of the current schema (but the
 * migrators' and the runtime's own, `svc_*` and `knex_*`), with its columns (Knex's `columnInfo`),
 * primary key, foreign keys and indexes (the dialect's `describeKeys`). The generator turns it into
 * specs; it reaches this module through `@svcgen/runtime/introspect`.
 */
import type { ListItemType } from '../core/catalogue';
import { connect, dialectOf, type Db } from './connection';
import type { TableKeys } from './dialects/dialect';

export interface ColumnInfo {
  name: string;
  /** The database's type name, lowercased: `integer`, `varchar`, `character varying`, `timestamp with time zone`, ... */
  type: string;
  maxLength: number | null;
  nullable: boolean;
  /** The default as the database writes it (`0`, `'text'::character varying`, `true`), or null. */
  defaultValue: string | null;
  /** An array column a list field can be: the type of its items. */
  list?: ListItemType;
}

export interface TableInfo extends TableKeys {
  name: string;
  columns: ColumnInfo[];
}

const SKIPPED = /^(svc_|knex_)/;

/** Every table of `db`, sorted by name. */
export async function introspect(db: Db): Promise<TableInfo[]> {
  const out: TableInfo[] = [];
  for (const name of (await dialectOf(db).listTables(db)).sort()) {
    if (SKIPPED.test(name)) continue;
    const info = await db(name).columnInfo();
    const lists = (await dialectOf(db).listColumns?.(db, name)) ?? {};
    const columns = Object.entries(info).map(([column, c]) => ({
      ...(lists[column] ? { list: lists[column] } : {}),
      name: column,
      type: String(c.type).toLowerCase(),
      maxLength: typeof c.maxLength === 'number' ? c.maxLength : c.maxLength ? Number(c.maxLength) : null,
      nullable: c.nullable,
      defaultValue: c.defaultValue === null || c.defaultValue === undefined ? null : String(c.defaultValue),
    }));
    out.push({ name, columns, ...(await dialectOf(db).describeKeys(db, name)) });
  }
  return out;
}

/** Connects to `url` (`sqlite:PATH` or `postgres://…`), reads its tables, and disconnects. */
export async function introspectUrl(url: string): Promise<TableInfo[]> {
  const db = connect(url, '');
  try {
    return await introspect(db);
  } finally {
    await db.destroy();
  }
}
