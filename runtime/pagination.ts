/**
 * Paginators. A list endpoint hands a paginator a `ListSource` (the filtered, ordered query) and
 * the validated page parameters; the paginator decides the response shape.
 *
 * Custom paginators extend PageNumberPagination or LimitOffsetPagination (the list endpoint reads
 * only those paginators' page parameters) and implement `apaginateQueryset`.
 */
import { z } from './zod';
import type { Request } from 'express';
import type { BuiltinPaginator } from './catalogue';
import { HttpError } from './errors';
import { fromString } from './query-params';
import type { Settings } from './settings';

/** The rows of a list after filters and ordering. `count` is computed after filters. */
export interface ListSource<T = unknown> {
  count(): Promise<number>;
  /** `limit` undefined means every row from `offset` on. */
  fetch(limit: number | undefined, offset: number): Promise<T[]>;
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

const positive = (name: string) => fromString.int().pipe(z.number().int().min(1)).optional().openapi({ description: name });

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
 * The seed's second page-number form: `{count, next, previous, results}` with page numbers for
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
    };
  }
  if (result && typeof result === 'object' && 'count' in result && 'fetch' in result) return result as ListSource;
  throw new TypeError('a paginated endpoint must return an array or a ListSource');
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
} satisfies Record<BuiltinPaginator, unknown>;
