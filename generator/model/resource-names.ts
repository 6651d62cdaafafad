/**
 * The model's names: what each resource is called in code, in the database, in URLs and in the
 * OpenAPI document, each with the spec position it comes from. Derived here once; the model
 * (build-model.ts) uses these values and the semantic checks (check-model.ts) compare them across
 * files, so a clash is found exactly where the generated service would have it.
 *
 * Works on any resource file that passed the meta-schema, whatever else is wrong with it, so that
 * clashing names are reported in the same run as other problems.
 */
import type { ResourceSpec } from '../validate/meta-schema';
import {
  BULK_METHODS,
  DEFAULT_ACTION_METHODS,
  DEFAULT_VIEWSET_CLASS,
  softDeleteFieldName,
  VIEWSET_OPERATIONS,
  type ActionMethod,
  type BulkKind,
} from '../validate/viewset-defaults';
import type { OperationKind, SourceRef } from './model';
import { pluralOf, snakeCase, wordsOf } from './names';

/** A name and where the spec decides it. */
export interface Named {
  name: string;
  source: SourceRef;
}

export interface ResourceNames {
  /** The model (class) name, e.g. `BlogPost`. */
  model: Named;
  /** `blog_post`: operation ids and the 404 class key. */
  snake: string;
  /** How the resource is shown (viewset.model_verbose_name(_plural) first, then the resource's own). */
  verboseName: string;
  verboseNamePlural: string;
  /** The database table: `table`, else the resource's own plural verbose name in snake case. */
  table: Named;
  /** Route segment `{base}`: `viewset.api_route_path`, else the shown plural verbose name (spaces as `-`). */
  base: Named;
  /** OpenAPI tag of every operation of the resource. */
  tag: string;
  /** The CRUD operations the viewset serves, in the default behaviours' order, with their operation ids. */
  operations: { kind: OperationKind; operationId: Named }[];
  /**
   * Operation ids of actions, in spec order: one route per method, `publish_article` (a list-level
   * action: `popular_articles`), or `inspect_box_get` and `inspect_box_post` for an action with several methods.
   */
  actions: { name: string; detail: boolean; routes: { method: ActionMethod; operationId: Named }[] }[];
  /** Bulk routes at `/{base}/bulk/`, in the spec's order: `bulk_create_articles` is `POST`. */
  bulk: { kind: BulkKind; method: 'post' | 'patch' | 'delete'; operationId: Named }[];
  /** Operation ids of the resource's custom endpoints, in spec order. */
  endpoints: Named[];
  /**
   * The soft delete, when the viewset has it: the field that marks a deleted row, and the operation
   * ids of its routes (`restore_article`, `hard_delete_article`).
   */
  softDelete?: { field: string; restore: Named; hardDelete?: Named };
  /** Composite indexes in spec order: the index name (`name`, else Knex's `<table>_<columns>_index|unique`) and its columns. */
  indexes: (Named & { columns: string[]; unique: boolean; entry: SourceRef })[];
}

export function resourceNames(file: string, spec: ResourceSpec): ResourceNames {
  const at = (...path: (string | number)[]): SourceRef => ({ file, path });
  const viewset = spec.viewset ?? {};
  const ownVerboseName = spec.verbose_name || wordsOf(spec.model);
  const ownVerboseNamePlural = spec.verbose_name_plural || pluralOf(ownVerboseName);
  const verboseName = viewset.model_verbose_name || ownVerboseName;
  const verboseNamePlural = viewset.model_verbose_name_plural || spec.verbose_name_plural || pluralOf(verboseName);
  // Where the shown plural comes from: the viewset's name, the resource's own, or the model's.
  const pluralAt = viewset.model_verbose_name_plural
    ? at('viewset', 'model_verbose_name_plural')
    : spec.verbose_name_plural
      ? at('verbose_name_plural')
      : viewset.model_verbose_name
        ? at('viewset', 'model_verbose_name')
        : at('model');
  const snake = snakeCase(spec.model);
  const pluralSnake = verboseNamePlural.replace(/[ -]+/g, '_');
  const explicitBase = (viewset.api_route_path ?? '').replace(/^\/+|\/+$/g, '');
  const base: Named = explicitBase
    ? { name: explicitBase, source: at('viewset', 'api_route_path') }
    : { name: urlSegment(verboseNamePlural), source: pluralAt };
  const table: Named =
    spec.table !== undefined
      ? { name: spec.table, source: at('table') }
      : {
          name: snakeCase(ownVerboseNamePlural.replace(/ /g, '_')),
          source: spec.verbose_name_plural ? at('verbose_name_plural') : spec.verbose_name ? at('verbose_name') : at('model'),
        };
  const disabled = new Set<string>(viewset.disable ?? []);
  const softDeleteField = softDeleteFieldName(viewset.soft_delete);
  const operations = VIEWSET_OPERATIONS[viewset.class ?? DEFAULT_VIEWSET_CLASS]
    .filter((kind) => !disabled.has(kind) && !disabled.has('all'))
    .map((kind) => ({
      kind,
      operationId: kind === 'list' ? { name: `list_${pluralSnake}`, source: pluralAt } : { name: `${kind}_${snake}`, source: at('model') },
    }));
  return {
    model: { name: spec.model, source: at('model') },
    snake,
    verboseName,
    verboseNamePlural,
    table,
    base,
    tag: verboseNamePlural[0].toUpperCase() + verboseNamePlural.slice(1),
    operations,
    actions: Object.entries(viewset.actions ?? {}).map(([name, action]) => {
      // A detail action acts on one record (`publish_article`), a list-level one on the collection (`popular_articles`).
      const detail = action.detail !== false;
      const id = `${name.replace(/-/g, '_')}_${detail ? snake : pluralSnake}`;
      const methods: readonly ActionMethod[] = action.methods ?? DEFAULT_ACTION_METHODS;
      return {
        name,
        detail,
        routes: methods.map((method) => ({
          method,
          operationId: { name: methods.length > 1 ? `${id}_${method}` : id, source: at('viewset', 'actions', name) },
        })),
      };
    }),
    bulk: (viewset.bulk?.operations ?? []).map((kind, i) => ({
      kind,
      method: BULK_METHODS[kind],
      operationId: { name: `bulk_${kind}_${pluralSnake}`, source: at('viewset', 'bulk', 'operations', i) },
    })),
    endpoints: (viewset.endpoints ?? []).map((e, i) => endpointOperationId(e.handler, at('viewset', 'endpoints', i, 'handler'))),
    softDelete:
      softDeleteField !== undefined
        ? {
            field: softDeleteField,
            restore: { name: `restore_${snake}`, source: at('viewset', 'soft_delete') },
            hardDelete:
              typeof viewset.soft_delete === 'object' && viewset.soft_delete.hard_delete_roles
                ? { name: `hard_delete_${snake}`, source: at('viewset', 'soft_delete', 'hard_delete_roles') }
                : undefined,
          }
        : undefined,
    indexes: (spec.indexes ?? []).map((written, i) => {
      const index = Array.isArray(written) ? { fields: written } : written;
      // A foreign key is indexed by its column, `<field>_id`.
      const columns = index.fields.map((name) => columnName(name, spec.fields[name]?.type));
      const unique = index.unique === true;
      const entry = at('indexes', i);
      return index.name !== undefined
        ? { name: index.name, source: at('indexes', i, 'name'), columns, unique, entry }
        : { name: indexName(table.name, columns, unique), source: entry, columns, unique, entry };
    }),
  };
}

/** Knex's name for an index it is not given one for: `articles_is_published_created_at_index`. */
export function indexName(table: string, columns: string[], unique: boolean): string {
  return `${table}_${columns.join('_')}_${unique ? 'unique' : 'index'}`;
}

/** A field's column: a foreign key's is `<field>_id`, any other field's its own name. */
export function columnName(field: string, type: string | undefined): string {
  return type === 'foreign_key' ? `${field}_id` : field;
}

/** The HTTP method of a custom endpoint: `api_get` → `get`. */
export function endpointMethod(method: string): string {
  return method.replace(/^api_/, '');
}

/** `blog posts` → `blog-posts`. */
export function urlSegment(words: string): string {
  return words.toLowerCase().split(' ').join('-');
}

/** A custom endpoint's operation id: its handler's name in snake case. */
export function endpointOperationId(handler: string, source: SourceRef): Named {
  return { name: snakeCase(handler), source };
}

/** A many-to-many relation's URL segment: its `path`, else the related resource's shown plural. */
export function relationPath(path: string | undefined, target: ResourceNames): string {
  return (path ?? '').replace(/^\/+/, '') || urlSegment(target.verboseNamePlural);
}

/** The operation ids of a relation's GET (`get_article_tags`) and POST (`manage_article_tags`). */
export function relationOperationIds(owner: ResourceNames, path: string): { get: string; manage: string } {
  const segment = path.replace(/[^a-z0-9]+/g, '_');
  return { get: `get_${owner.snake}_${segment}`, manage: `manage_${owner.snake}_${segment}` };
}
