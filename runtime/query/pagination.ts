/**
 * Paginators. A list endpoint hands a paginator a `ListSource` (the filtered, ordered query) and
 * the validated page parameters; the paginator decides the response shape.
 *
 * Custom paginators extend PageNumberPagination or LimitOffsetPagination (the list endpoint reads
 * only those paginators' page parameters) and implement `apaginateQueryset`. CursorPagination
 * reads the list by position in its order instead (`ListSource.keyset`), and never counts it.
 */
import { z } from '../core/zod';
import type { Request } from 'express';
import type { BuiltinPaginator } from '../core/catalogue';
import { HttpError, RequestValidationError } from '../core/errors';
import { fromString } from '../validation/query-params';
import type { Settings } from '../core/settings';

/** The rows of a list after filters and ordering. `count` is computed after filters. */
export interface ListSource<T = unknown> {
  count(): Promise<number>;
  /** `limit` undefined means every row from `offset` on. */
  fetch(limit: number | undefined, offset: number): Promise<T[]>;
  /** Reading by position in the list's order (what CursorPagination needs); absent when the source cannot. */
  keyset?: KeysetReader<T>;
}

/**
 * A list read by position: a position is the values of the ordering's terms in one item (its key),
 * and a read returns the items strictly after it (or before it, backward), so pages neither skip
 * nor repeat items when rows are inserted or deleted between reads.
 */
export interface KeysetReader<T = unknown> {
  /** The terms of the order, the unique tie-break last (`-rank`, `id`): what a cursor must have been made for. */
  readonly ordering: readonly string[];
  /** A cursor's position as the values to compare with, or undefined when they do not fit the terms' types. */
  accept(position: readonly unknown[]): unknown[] | undefined;
  /**
   * At most `limit` items after `position` in the order (from the start when null), or with
   * `backward` the items before it (from the end when null), nearest first; each item's key alongside.
   */
  read(limit: number, position: readonly unknown[] | null, backward: boolean): Promise<{ items: T[]; keys: unknown[][] }>;
}

export interface PaginatorOptions {
  page_size?: number;
  max_page_size?: number;
  max_limit?: number;
}

export abstract class Paginator<P extends Record<string, unknown> = Record<string, unknown>> {
  /** Query parameters this paginator reads, merged into the list's query schema. */
  abstract readonly querySchema: z.ZodObject;
  /** The documented response for a list of `item`. */
  abstract responseSchema(item: z.ZodType): z.ZodType;
  abstract apaginateQueryset(source: ListSource, params: P, req: Request): Promise<unknown>;
}

const positive = (name: string) => fromString.int().pipe(z.number().int().min(1)).optional().meta({ description: name });

/** `{items, count}` with `page` (≥ 1) and `page_size` (default SVC_PAGINATION_PER_PAGE, capped at SVC_MAX_PER_PAGE_SIZE). */
export class PageNumberPagination extends Paginator<{ page?: number; page_size?: number }> {
  readonly pageSize: number;
  readonly maxPageSize: number;
  readonly querySchema = z.object({ page: positive('Page number, from 1'), page_size: positive('Items per page') });

  constructor(options: PaginatorOptions, settings: Settings) {
    super();
    this.maxPageSize = options.max_page_size ?? settings.SVC_MAX_PER_PAGE_SIZE;
    this.pageSize = Math.min(options.page_size ?? settings.SVC_PAGINATION_PER_PAGE, this.maxPageSize);
  }

  responseSchema(item: z.ZodType): z.ZodType {
    return z.object({ items: z.array(item), count: z.number().int() });
  }

  async apaginateQueryset(source: ListSource, params: { page?: number; page_size?: number }, _req?: Request): Promise<unknown> {
    const size = Math.min(params.page_size ?? this.pageSize, this.maxPageSize);
    const page = params.page ?? 1;
    const [count, items] = await Promise.all([source.count(), source.fetch(size, (page - 1) * size)]);
    return { items, count };
  }
}

function limitOffsetQuery(maxLimit: number) {
  return z.object({
    limit: fromString.int().pipe(z.number().int().min(1).max(maxLimit)).optional(),
    offset: fromString.int().pipe(z.number().int().min(0)).optional(),
  });
}

/** `{items, count}` with `limit` (default SVC_PAGINATION_PER_PAGE, above SVC_PAGINATION_MAX_LIMIT a 422) and `offset`. */
export class LimitOffsetPagination extends Paginator<{ limit?: number; offset?: number }> {
  readonly defaultLimit: number;
  readonly maxLimit: number;
  readonly querySchema: ReturnType<typeof limitOffsetQuery>;

  constructor(options: PaginatorOptions, settings: Settings) {
    super();
    this.maxLimit = options.max_limit ?? options.max_page_size ?? settings.SVC_PAGINATION_MAX_LIMIT;
    this.defaultLimit = Math.min(options.page_size ?? settings.SVC_PAGINATION_PER_PAGE, this.maxLimit);
    this.querySchema = limitOffsetQuery(this.maxLimit);
  }

  responseSchema(item: z.ZodType): z.ZodType {
    return z.object({ items: z.array(item), count: z.number().int() });
  }

  async apaginateQueryset(source: ListSource, params: { limit?: number; offset?: number }, _req?: Request): Promise<unknown> {
    const [count, items] = await Promise.all([source.count(), source.fetch(params.limit ?? this.defaultLimit, params.offset ?? 0)]);
    return { items, count };
  }
}

/**
 * The default behaviours' second page-number form: `{count, next, previous, results}` with page numbers for
 * next and previous, page_size default 10 and at most 100, and a 404 for a page that does not exist.
 */
export class PageNumberResultsPagination extends PageNumberPagination {
  constructor(options: PaginatorOptions, settings: Settings) {
    super({ page_size: options.page_size ?? 10, max_page_size: options.max_page_size ?? 100 }, settings);
  }

  override responseSchema(item: z.ZodType): z.ZodType {
    return z.object({
      count: z.number().int(),
      next: z.number().int().nullable(),
      previous: z.number().int().nullable(),
      results: z.array(item),
    });
  }

  override async apaginateQueryset(source: ListSource, params: { page?: number; page_size?: number }, _req?: Request): Promise<unknown> {
    const size = Math.min(params.page_size ?? this.pageSize, this.maxPageSize);
    const page = params.page ?? 1;
    const count = await source.count();
    const pages = Math.max(1, Math.ceil(count / size));
    if (page > pages) throw new HttpError(404, 'Invalid page.');
    const results = await source.fetch(size, (page - 1) * size);
    return { count, next: page < pages ? page + 1 : null, previous: page > 1 ? page - 1 : null, results };
  }
}

/** A decoded cursor: the ordering it was made for, a position in it (null: the start or, reversed, the end), and the direction. */
export interface Cursor {
  ordering: string[];
  position: (string | number | boolean)[] | null;
  reverse: boolean;
}

const INVALID_CURSOR = 'Invalid cursor';

const cursorShape = z.strictObject({
  ordering: z.array(z.string()).min(1),
  position: z
    .array(z.union([z.string(), z.number(), z.boolean()]))
    .min(1)
    .nullable(),
  reverse: z.boolean(),
});

/** A cursor as the `cursor` query parameter carries it: base64url of its JSON. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

/** The cursor `text` encodes, or undefined when it is not one (Node's decoder skips stray characters, hence the pattern). */
export function decodeCursor(text: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = cursorShape.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

const cursorParam = () =>
  fromString
    .str()
    .transform((value, ctx): Cursor => {
      const cursor = decodeCursor(value);
      if (cursor) return cursor;
      ctx.issues.push({ code: 'custom', message: INVALID_CURSOR, params: { type: 'value_error' }, input: value });
      return z.NEVER;
    })
    .optional()
    .meta({ type: 'string', description: 'Opaque position in the list: take it from the next or previous link of a page' });

/** A 422 on the cursor that decodes but does not fit this list. */
const cursorError = (msg: string) => new RequestValidationError([{ type: 'value_error', loc: ['query', 'cursor'], msg }]);

/**
 * The request's own path and query with `cursor` set to `cursor`, or without it (the first page),
 * after `SVC_PUBLIC_URL` when it is set: a relative reference otherwise. The request's `Host` (and
 * an absolute request target's host) never makes a link: a client may send any.
 */
function pageLink(req: Request, cursor: Cursor | null): string {
  const url = new URL(req.originalUrl, 'http://localhost');
  if (cursor) url.searchParams.set('cursor', encodeCursor(cursor));
  else url.searchParams.delete('cursor');
  const base = req.app?.locals?.svcPublicUrl as string | undefined;
  return `${base ?? ''}${url.pathname}${url.search}`;
}

/**
 * DRF's cursor pagination: `{next, previous, results}` with the next and previous pages' URLs, and
 * no count (so no COUNT query). A page is read by position in the list's order (the effective
 * ordering, the primary key last), so walking the pages neither repeats nor skips an item when rows
 * are inserted meanwhile. `page_size` as PageNumberPagination's: default the `page_size` option or
 * SVC_PAGINATION_PER_PAGE, capped at the `max_page_size` option or SVC_MAX_PER_PAGE_SIZE. A cursor
 * that does not decode, was made for another ordering or carries values of the wrong types is a 422
 * at `query.cursor`.
 */
export class CursorPagination extends Paginator<{ cursor?: Cursor; page_size?: number }> {
  readonly pageSize: number;
  readonly maxPageSize: number;
  readonly querySchema = z.object({ cursor: cursorParam(), page_size: positive('Items per page') });

  constructor(options: PaginatorOptions, settings: Settings) {
    super();
    this.maxPageSize = options.max_page_size ?? settings.SVC_MAX_PER_PAGE_SIZE;
    this.pageSize = Math.min(options.page_size ?? settings.SVC_PAGINATION_PER_PAGE, this.maxPageSize);
  }

  responseSchema(item: z.ZodType): z.ZodType {
    return z.object({
      next: z.string().nullable().meta({ description: 'URL of the next page; null on the last' }),
      previous: z.string().nullable().meta({ description: 'URL of the previous page; null on the first' }),
      results: z.array(item),
    });
  }

  async apaginateQueryset(source: ListSource, params: { cursor?: Cursor; page_size?: number }, req: Request): Promise<unknown> {
    const { keyset } = source;
    if (!keyset) throw new TypeError('CursorPagination needs a list it can read by position (a ListSource with a keyset)');
    const size = Math.min(params.page_size ?? this.pageSize, this.maxPageSize);
    const { cursor } = params;
    const ordering = [...keyset.ordering];
    let position: unknown[] | null = null;
    if (cursor) {
      if (cursor.ordering.length !== ordering.length || cursor.ordering.some((term, i) => term !== ordering[i])) {
        throw cursorError('Cursor was made for another ordering');
      }
      if (cursor.position) {
        const accepted = keyset.accept(cursor.position);
        if (!accepted) throw cursorError(INVALID_CURSOR);
        position = accepted;
      }
    }
    const backward = cursor?.reverse ?? false;
    // One item more than the page tells whether the list goes on in the direction read.
    const read = await keyset.read(size + 1, position, backward);
    const more = read.items.length > size;
    const results = read.items.slice(0, size);
    const keys = read.keys.slice(0, size) as Cursor['position'][];
    if (backward) {
      results.reverse();
      keys.reverse();
    }
    // A page read from a position has items on that side of it: the page it was reached from.
    const hasNext = backward ? position !== null : more;
    const hasPrevious = backward ? more : position !== null;
    const at = (key: Cursor['position'], reverse: boolean): Cursor => ({ ordering, position: key, reverse });
    // An empty page read from a position has nothing beyond it: its other link starts over from that
    // side's end of the list (the first page going forward, the last going back).
    const next = !hasNext ? null : pageLink(req, results.length ? at(keys[keys.length - 1], false) : null);
    const previous = !hasPrevious ? null : pageLink(req, at(results.length ? keys[0] : null, true));
    return { next, previous, results };
  }
}

export type PaginatorClass = new (options: PaginatorOptions, settings: Settings) => Paginator<any>;

/** Runs any paginator, built-in or custom, on a list. */
export function paginate(paginator: Paginator<any>, source: ListSource, params: Record<string, unknown>, req: Request): Promise<unknown> {
  return paginator.apaginateQueryset(source, params, req);
}

/** A custom endpoint's list result as a ListSource: an array (paged in memory) or a ListSource. */
export function listSource(result: unknown): ListSource {
  if (Array.isArray(result)) {
    const items = result;
    return {
      count: async () => items.length,
      fetch: async (limit, offset) => items.slice(offset, limit === undefined ? undefined : offset + limit),
      // Built when a paginator asks for it (CursorPagination), as querySource's.
      get keyset() {
        return arrayKeyset(items);
      },
    };
  }
  if (result && typeof result === 'object' && 'count' in result && 'fetch' in result) return result as ListSource;
  throw new TypeError('a paginated endpoint must return an array or a ListSource');
}

/**
 * An array in its own order: an item's key is its index. The array is the handler's answer to one
 * request, so a position is an index into the next request's array.
 */
function arrayKeyset(items: readonly unknown[]): KeysetReader {
  return {
    ordering: ['index'],
    accept: (position) =>
      position.length === 1 && Number.isSafeInteger(position[0]) && (position[0] as number) >= 0 ? [position[0]] : undefined,
    async read(limit, position, backward) {
      const at = position === null ? null : (position[0] as number);
      // Backward: the index before `at` (before the end when null), at most the last one.
      const from = backward ? Math.min(at ?? items.length, items.length) - 1 : at === null ? 0 : at + 1;
      const indexes: number[] = [];
      for (let i = from; i >= 0 && i < items.length && indexes.length < limit; i += backward ? -1 : 1) indexes.push(i);
      return { items: indexes.map((i) => items[i]), keys: indexes.map((i) => [i]) };
    },
  };
}

/** The list without pagination (`pagination_class: null`): a plain array of every item. */
export async function listAll(source: ListSource): Promise<unknown[]> {
  return source.fetch(undefined, 0);
}

/** The built-in paginators by the names specs use (the catalogue's list, checked here). */
export const BUILTIN_PAGINATOR_CLASSES = {
  PageNumberPagination,
  LimitOffsetPagination,
  PageNumberResultsPagination,
  CursorPagination,
} satisfies Record<BuiltinPaginator, unknown>;
