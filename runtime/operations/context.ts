/**
 * What generated routes and user hooks receive: the service context (built once at start) and the
 * request context (one per request, holding the transaction when the operation writes).
 */
import type { Request } from 'express';
import { requireAuth } from '../auth/authenticators';
import {
  dialectOf,
  insertWhereReferencesExist,
  selectAround,
  selectFirst,
  selectFixed,
  writeReturning,
  type Db,
  type RowReference,
} from '../db/connection';
import { NotFoundError, type ModelRef } from '../core/errors';
import type { Knex } from 'knex';
import {
  relatedColumns,
  relationsJoin,
  withKnownRelations,
  type ColumnOf,
  type KnownRelations,
  type Row,
  type StateRelations,
} from '../db/rows';
import type { Settings } from '../core/settings';
import { TransactionGate } from './transactions';
import { onlyFilters } from '../db/sql-text';
import { checkPreconditions, etagOf } from './conditional';
import type { ExceptionHandlers, HookContext, ModelInfo, RequestContext, ServiceContext } from './types';
import { relatedExists } from './visibility';

export type { HookContext, ModelInfo, RequestContext, ServiceContext } from './types';

/** A related row an insert names (`insertRow`): its table, key and model, for the 404 when it is missing. */
export interface InsertReference extends RowReference {
  model: ModelInfo;
}

/** What an insert checks and reads besides its row (`rowLookup`'s `insertRow`). */
export interface InsertOptions<R extends Row = Row> {
  /** The related rows the values name, checked by the insert. */
  references?: readonly InsertReference[];
  /** The relations of the state's representation, read with the insert. */
  relations?: StateRelations<R>;
}

/** A 404 with the model of the first of `references` that names no row the caller may see. */
async function checkReferences(ctx: RequestContext, references: readonly InsertReference[]): Promise<void> {
  for (const r of references) if (!(await relatedExists(ctx, r.table, r.pk, r.key))) throw new NotFoundError(ctx.service.model(r.model));
}

export function modelRef(model: ModelInfo, settings: Settings): ModelRef {
  return { notFoundKey: settings.SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES ? model.verboseKey : model.classKey };
}

export function createServiceContext(
  options: Omit<ServiceContext, 'auth' | 'model' | 'exceptionHandlers' | 'transactions'> & { exceptionHandlers?: ExceptionHandlers },
): ServiceContext {
  const service: ServiceContext = {
    ...options,
    conflicts: options.settings.SVC_NAMED_CONFLICTS ? options.conflicts : undefined,
    exceptionHandlers: options.exceptionHandlers ?? [],
    loginThrottle: undefined,
    transactions: new TransactionGate(),
    auth: (authenticators) => {
      const authenticate = requireAuth(authenticators, () => service);
      return (req, res, next) => {
        req.service = service;
        return authenticate(req, res, next);
      };
    },
    model: (model) => modelRef(model, options.settings),
  };
  return service;
}

export function requestContext(req: Request, db: Db, service: ServiceContext): RequestContext {
  return { req, user: req.auth, db, service };
}

/** Builds a hook's argument. Typed loosely on purpose: a hook may declare a narrower view of it. */
export function withArgs<Args extends object>(ctx: RequestContext, args: Args): HookContext<Args> {
  // Object.assign, not two spreads: the engine copies a second spread in its runtime, 7 times slower.
  return Object.assign({}, ctx, args);
}

/**
 * The row lookups of a resource's routes, built once per service. `queryset(ctx)` is the base query
 * of reads, narrowed in place by `narrow` (the queryset_request hook); it is wrapped in an object
 * because a Knex query is thenable and awaiting it would run it.
 *
 * With `softDelete` (the column that marks a soft-deleted row), every lookup but `lockDeleted` and
 * `lockAny` sees the live rows only (the column is NULL): a deleted row is a 404 as a missing one.
 * The condition is the query's first; a `narrow` hook adds its own with `where` (an `orWhere` at the
 * top would stand beside it, so it groups its alternatives: `query.where((q) => q.where(…).orWhere(…))`).
 * The lookups answer rows of the resource's row type `R` (the columns asked for).
 *
 * Writes (`lockRow`, `lockDeleted`, `lockAny`: updates, deletes, actions, relation changes,
 * restores) see the rows `narrowWrites` leaves (the spec's queryset_write hook, by default the
 * queryset_request one), so a row the caller may not read is the same 404 as a missing one; without
 * it they look the row up by key alone. `findRow` (the re-read of a written row) always does.
 *
 * With `state` (the columns and shaping of the resource's detail representation), `stateETag`
 * answers the ETag of a row's state, and `lockRow` and `lockAny` check the request's `If-Match`
 * and `If-None-Match` against it once the row is held (conditional.ts): a 412 when stale (or, for
 * `If-None-Match`, current), and with `requireIfMatch` a 428 when the request has no `If-Match`,
 * answered once the write's work is done without another failure. `lockDeleted` (a restore)
 * checks nothing: a deleted row has no representation to match.
 */
export function rowLookup<R extends Row = Row>(options: {
  table: string;
  pk: ColumnOf<R>;
  model: ModelRef;
  narrow?: (ctx: RequestContext, query: Knex.QueryBuilder) => unknown;
  narrowWrites?: (ctx: RequestContext, query: Knex.QueryBuilder) => unknown;
  softDelete?: string;
  state?: { columns: readonly string[]; shape: (db: Db, rows: R[]) => Promise<unknown[]> };
  requireIfMatch?: boolean;
}) {
  const { table, pk, model, narrow, narrowWrites, softDelete, state, requireIfMatch = false } = options;
  // findRow's statements, one per list of columns, built once (selectFixed).
  const byKey = {};
  // With `state`, findRow reads the state's columns beside those asked for (one list per list asked
  // for, made once), and keeps the row it read for its context: the written row's ETag (`stateETag`,
  // run right after the write's work, in its transaction) is hashed from it instead of reading it again.
  const withState = new WeakMap<readonly string[], readonly string[]>();
  const written = new WeakMap<RequestContext, { key: unknown; row: R; known?: KnownRelations }>();
  const readForState = (columns: readonly string[]): readonly string[] => {
    if (!state) return columns;
    let all = withState.get(columns);
    if (!all) withState.set(columns, (all = [...new Set([...columns, ...state.columns])]));
    return all;
  };
  /** Only the live rows, when the resource soft-deletes. */
  const live = (query: Knex.QueryBuilder) => (softDelete ? query.whereNull(`${table}.${softDelete}`) : query);
  async function queryset(ctx: RequestContext): Promise<{ query: Knex.QueryBuilder }> {
    const query = live(ctx.db(table));
    // Await only a promise: a sync hook that returns the (thenable) query must not run it.
    const result = narrow?.(ctx, query);
    if (result instanceof Promise) await result;
    return { query };
  }
  /**
   * The row with this key among `rows` the caller may write (`narrowWrites`), locked on PostgreSQL
   * until the transaction ends, or a 404: a row the narrowing hides is missing, as for reads.
   */
  async function lock(ctx: RequestContext, key: unknown, columns: readonly string[], rows: 'live' | 'deleted' | 'any'): Promise<R> {
    const query = ctx
      .db(table)
      .select(columns)
      .where(`${table}.${pk}`, key as any);
    if (softDelete && rows === 'live') query.whereNull(`${table}.${softDelete}`);
    if (softDelete && rows === 'deleted') query.whereNotNull(`${table}.${softDelete}`);
    const narrowed = narrowWrites?.(ctx, query);
    if (narrowed instanceof Promise) await narrowed;
    dialectOf(ctx.db).lockForUpdate(query);
    const row: R | undefined = await query.first();
    if (!row) throw new NotFoundError(model);
    written.delete(ctx);
    if (state && rows !== 'deleted')
      await checkPreconditions(ctx.req, requireIfMatch, () => currentETag(ctx, key), ctx.db.isTransaction === true);
    return row;
  }
  /** The row with this key by key alone, or undefined. */
  async function byKeyAlone(ctx: RequestContext, key: unknown, columns: readonly string[]): Promise<R | undefined> {
    const [row] = await selectFixed(
      ctx.db,
      byKey,
      columns.join(','),
      () =>
        live(
          ctx
            .db(table)
            .select(columns)
            .where(pk, key as any),
        ).limit(1, { skipBinding: true }),
      [key],
    );
    return row as R | undefined;
  }
  /** The ETag of the row's state (its detail representation), read in `ctx.db`; undefined when the row is gone. */
  async function currentETag(ctx: RequestContext, key: unknown): Promise<string | undefined> {
    if (!state) return undefined;
    const row = await byKeyAlone(ctx, key, state.columns);
    return row ? etagOfRow(ctx, row) : undefined;
  }
  async function etagOfRow(ctx: RequestContext, row: R, known?: KnownRelations): Promise<string> {
    const shape = () => state!.shape(ctx.db, [row]);
    const [shaped] = await (known ? withKnownRelations(ctx.db, known, shape) : shape());
    return etagOf(shaped);
  }
  /**
   * The ETag of a written row's state: from the row `findRow` read last for `ctx` when it has this
   * key (the re-read of the row the write's work answers with), else read again.
   */
  async function stateETag(ctx: RequestContext, key: unknown): Promise<string | undefined> {
    const last = written.get(ctx);
    written.delete(ctx);
    if (last && last.key === key) return etagOfRow(ctx, last.row, last.known);
    return currentETag(ctx, key);
  }
  return {
    queryset,
    /**
     * The row with this primary key among those the caller may read, or a 404. With `relations`
     * (those of the representation it is read for), the same statement reads the related records
     * it can join (`relationsJoin`): shaping the row does not read them again.
     */
    async findVisible(ctx: RequestContext, key: unknown, columns: readonly string[], relations?: StateRelations<R>): Promise<R> {
      const { query } = await queryset(ctx);
      // Joined where the query, as hooks narrowed it, only filters its table's rows: the key is then one row's.
      const join = relations && onlyFilters(query) ? relationsJoin(ctx.db, pk, columns, relations) : undefined;
      query.select(columns).where(`${table}.${pk}`, key as any);
      const row = join ? join.read(await selectAround(ctx.db, query, join.around)) : await selectFirst(ctx.db, query);
      if (!row) throw new NotFoundError(model);
      return row as R;
    },
    /**
     * Inserts `values` and answers the new row with `columns` (and the state's): from the INSERT's
     * `RETURNING` where the database has it, else read again by the key it generated. Kept, as
     * `findRow` keeps the row it reads, for the ETag of the create's answer.
     *
     * `references`, the related rows the body names (a foreign key's value, null or undefined when
     * it names none), must exist: the insert itself checks them (`insertWhereReferencesExist`), and
     * writes nothing when one is missing, which is then a 404 with its model, the first missing in
     * their order, as checking each before the insert answers.
     *
     * `relations`, the relations of the state's representation, when nothing the create does after
     * the insert writes them (no relation or child the body names, no hook after it): the insert's
     * `RETURNING` reads the related records of its foreign keys too, and the row has no children yet
     * (`StateRelations`), so the ETag of the create's answer is hashed without reading them again
     * (on PostgreSQL, a round trip fewer). Where the insert returns no rows (MySQL), they are read.
     */
    async insertRow(ctx: RequestContext, values: Partial<R>, columns: readonly string[], options: InsertOptions<R> = {}): Promise<R> {
      const all = readForState(columns);
      const named = options.references?.filter((r) => r.key !== undefined && r.key !== null) ?? [];
      const dialect = dialectOf(ctx.db);
      const returnsRows = dialect.insertReturnsRows;
      const related = returnsRows && state && options.relations ? relatedColumns(ctx.db, table, options.relations) : undefined;
      const insert = dialect.returning(ctx.db(table).insert(values), values, returnsRows ? all : [pk]);
      // A reference to rows a hook narrows is checked with the hook first: the insert's own check sees every row.
      const narrowed = named.length > 0 && ctx.service.visibility !== undefined && named.some((r) => ctx.service.visibility![r.table]);
      if (narrowed) await checkReferences(ctx, named);
      let rows = named.length > 0 && !narrowed ? await insertWhereReferencesExist(ctx.db, insert, named, related?.sql) : undefined;
      if (rows === undefined) {
        if (named.length > 0 && !narrowed) await checkReferences(ctx, named);
        rows = await writeReturning(ctx.db, insert, related?.sql);
      } else if (rows.length === 0) {
        await checkReferences(ctx, named);
        // Each exists now: one was added after the insert found it missing (which one is not known). A
        // check before the insert would have found it missing too: a 404, with the first one's model.
        throw new NotFoundError(ctx.service.model(named[0].model));
      }
      let row = rows[0] as R | undefined;
      if (row && !returnsRows) row = await byKeyAlone(ctx, row[pk], all);
      if (!row) throw new NotFoundError(model);
      if (!state) return row;
      if (!related) {
        written.set(ctx, { key: row[pk], row });
        return row;
      }
      const read = related.read(row, row[pk]);
      written.set(ctx, { key: row[pk], row: read.row as R, known: read.known });
      return read.row as R;
    },
    /** The row with this primary key, or a 404 (by key alone: the re-read of a row just written). */
    async findRow(ctx: RequestContext, key: unknown, columns: readonly string[]): Promise<R> {
      const row = await byKeyAlone(ctx, key, readForState(columns));
      if (!row) throw new NotFoundError(model);
      if (state) written.set(ctx, { key, row });
      return row;
    },
    stateETag,
    /**
     * `findRow` for a write that reads the row and then changes it (an update, a delete, an
     * action): on PostgreSQL the row stays locked (`SELECT … FOR UPDATE`) until the operation's
     * transaction ends, so a concurrent writer of the same row waits and then reads what this one
     * wrote. SQLite needs no lock: the service has one connection, so transactions run one at a time.
     */
    lockRow(ctx: RequestContext, key: unknown, columns: readonly string[]): Promise<R> {
      return lock(ctx, key, columns, 'live');
    },
    /** `lockRow` among the soft-deleted rows (a restore): a live or missing row is a 404. */
    lockDeleted(ctx: RequestContext, key: unknown, columns: readonly string[]): Promise<R> {
      return lock(ctx, key, columns, 'deleted');
    },
    /** `lockRow` among every row, live or soft-deleted (a hard delete). */
    lockAny(ctx: RequestContext, key: unknown, columns: readonly string[]): Promise<R> {
      return lock(ctx, key, columns, 'any');
    },
  };
}
