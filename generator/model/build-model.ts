/**
 * Stage 3: the intermediate model from the described specs (check-model.ts): the names derived
 * there, and everything else (columns, schemas, resolved auth, operations, filters) derived here,
 * once, from the typed spec documents. Templates only print the model. This module runs the passes
 * and assembles each resource; the parts are built by concept: fields and relations
 * (build-fields.ts), schemas (build-schemas.ts), what the viewset serves (build-viewset.ts) and
 * list filters (build-filters.ts).
 */
import { buildFilters, compileLookup, modelGraph, type ModelGraph } from './build-filters';
import type { DescribedSpecs } from './check-model';
import type { ServiceSpec, ViewsetSpec } from '../validate/meta-schema';
import { SETTINGS, type SettingName } from '../validate/meta-schema';
import type {
  AuthSpec,
  ManyToMany,
  OrderingColumn,
  NestedWrite,
  Resource,
  ReverseRelation,
  SchemaField,
  SchemaModel,
  SchemaRole,
  ServiceModel,
} from './model';
import { pascalCase } from './names';
import { DEFAULT_NESTED_MAX_ITEMS, type Draft, type Targets, draftResource, m2mOf, primaryKeyOf, reverseRelations } from './build-fields';
import {
  actionsOf,
  bulkKey,
  bulkKeyOf,
  bulkOf,
  bulkUpdateItem,
  endpointsOf,
  operationsOf,
  paginationOf,
  relationsOf,
  softDeleteOf,
} from './build-viewset';
import { SECTION, type SchemaContext, lookup, manualSchema, resolveSchema, responseSchema, schemaFieldFor } from './build-schemas';

export function buildModel(described: DescribedSpecs): ServiceModel {
  const service: ServiceSpec | undefined = described.service?.data;
  // Foreign keys carry their target's table and primary key: both are known before any field is made.
  const targets: Targets = new Map(
    described.resources.map((r) => [r.names.model.name, { table: r.names.table.name, pk: primaryKeyOf(r) }]),
  );
  const drafts = described.resources.map((r) => draftResource(r, targets));
  const byModel = new Map(drafts.map((d) => [d.model, d]));
  // Second pass, every resource's fields known: each relation field naming its reverse side.
  const m2ms = new Map(drafts.map((d) => [d.model, m2mOf(d, byModel)]));
  const reverse = reverseRelations(drafts, m2ms);
  const settings = Object.fromEntries(
    (Object.keys(SETTINGS) as SettingName[]).map((name) => [name, service?.settings?.[name] ?? SETTINGS[name].default]),
  ) as Record<SettingName, string | number | boolean>;
  // The authenticators of a resource's writes the spec leaves NOT_SET: `auth.default_write_auth`, else public (the default behaviours').
  const writeAuth: AuthSpec = service?.auth?.default_write_auth ? [...service.auth.default_write_auth] : null;
  return {
    title: service?.title ?? '',
    version: String(service?.version ?? ''),
    description: service?.description,
    license: service?.license,
    contact: service?.contact,
    basePath: service?.base_path ?? '',
    extraFields: service?.extra_fields ?? 'ignore',
    tokenPaths: (service?.endpoints ?? []).filter((e) => e.response?.fields.access_token !== undefined).map((e) => e.path),
    settings,
    sqliteFile: service?.database?.sqlite_file ?? 'data/service.sqlite3',
    auth: {
      userModel: service?.auth?.user_model,
      keysDir: service?.auth?.keys_dir ?? 'data/keys',
      extraClaims: service?.auth?.extra_claims ?? [],
      profileFields: service?.auth?.profile_fields ?? [],
      cookies: service?.auth?.cookies === true || service?.auth?.cookies === 'only',
      cookiesOnly: service?.auth?.cookies === 'only',
    },
    hooks: service?.hooks,
    views: service?.views,
    hookRefs: described.service?.hooks ?? [],
    sharedHooks: [...(service?.paginators ?? []), ...(service?.auth?.authenticators ?? [])],
    endpoints: endpointsOf(service?.endpoints ?? [], 'default', (i) => ['endpoints', i, 'handler'], described.service?.spec.file ?? ''),
    exceptionHandlers: Object.entries(service?.exception_handlers ?? {}).map(([exception, handler]) => ({ exception, handler })),
    resources: withNestedWrites(
      drafts,
      drafts.map((d) => buildResource(d, byModel, m2ms, reverse, service?.extra_fields ?? 'ignore', writeAuth)),
    ),
  };
}

/**
 * Third pass, every resource built: the nested writes of each input section (`- lines: {write: ...}`),
 * whose items take the child resource's create fields, appended to schema_in and schema_update.
 */
function withNestedWrites(drafts: Draft[], resources: Resource[]): Resource[] {
  const byModel = new Map(resources.map((r) => [r.model, r]));
  resources.forEach((r, i) => {
    const sections = drafts[i].spec.serializer;
    for (const [role, kind] of [
      ['in', 'create'],
      ['update', 'update'],
    ] as const) {
      const schema = r.schemas[role];
      if (schema.source !== 'serializer') continue;
      for (const entry of sections?.[SECTION[role]]?.fields ?? []) {
        if (typeof entry === 'string') continue;
        const [name, spec] = Object.entries(entry)[0];
        if (spec.write === undefined) continue;
        const write = nestedWrite(r, name, spec.write, byModel, kind, spec.max_items ?? DEFAULT_NESTED_MAX_ITEMS);
        schema.fields.push({ name, kind: 'nested_write', value: 'list', required: false, nullable: false, write });
        r.nestedWrites[kind].push(write);
      }
      const writes = r.nestedWrites[kind];
      if (writes.length === 0) continue;
      const base = r.responses[kind];
      const lists = writes.map((w): SchemaField => ({
        name: w.name,
        kind: 'nested_write',
        value: 'list',
        required: kind === 'create',
        nullable: false,
        write: w,
      }));
      r.nestedResults[kind] = {
        name: `${r.model}${kind === 'create' ? 'Create' : 'Update'}Result`,
        role: 'out',
        source: base.source,
        fields: [...base.fields, ...lists],
      };
    }
  });
  return resources;
}

/** The nested write of the reverse relation `name` (validated: a reverse foreign key whose resource creates its rows). */
function nestedWrite(
  r: Resource,
  name: string,
  mode: NestedWrite['mode'],
  byModel: ReadonlyMap<string, Resource>,
  kind: 'create' | 'update',
  maxItems: number,
): NestedWrite {
  const relation = r.reverse.find((rel) => rel.name === name)!;
  const child = byModel.get(relation.from)!;
  const fields = child.schemas.in.fields.filter((f) => f.field !== relation.field && f.kind !== 'nested_write');
  const suffix = kind === 'create' ? 'Item' : 'UpdateItem';
  // In an update, an item naming a child's key changes that child; one without creates a child.
  const key: SchemaField = { ...bulkKeyOf(child.pk), required: false };
  const item: SchemaModel = {
    name: `${r.model}${pascalCase(name)}${suffix}`,
    role: 'in',
    source: 'serializer',
    fields: kind === 'create' ? fields : [key, ...fields.filter((f) => f.name !== key.name)],
  };
  return { name, relation, mode, child, item, maxItems };
}

/** An ordering field's column; `author__username` follows the foreign keys (validated: no many-to-many on the way). */
function orderingColumn(d: Draft, graph: ModelGraph, name: string): OrderingColumn {
  if (!name.includes('__')) return { column: d.fields.find((f) => f.name === name)!.column };
  const plan = compileLookup(graph, d.model, name);
  return { column: plan.column, hops: plan.hops.map((h) => ({ from: h.from, table: h.table, key: h.select })) };
}

function buildResource(
  d: Draft,
  byModel: ReadonlyMap<string, Draft>,
  m2ms: ReadonlyMap<string, ManyToMany[]>,
  reverses: ReadonlyMap<string, ReverseRelation[]>,
  extraFields: 'ignore' | 'forbid',
  writeAuth: AuthSpec,
): Resource {
  const viewset: ViewsetSpec = d.spec.viewset ?? {};
  const names = d.names;
  const m2m = m2ms.get(d.model)!;
  const reverse = reverses.get(d.model) ?? [];
  const ctx: SchemaContext = { draft: d, m2m, reverse, byModel };

  const schemas = {} as Record<SchemaRole, SchemaModel>;
  for (const role of ['in', 'out', 'update'] as const) schemas[role] = resolveSchema(ctx, role)!;
  const detail = resolveSchema(ctx, 'detail');
  schemas.detail = detail ?? schemas.out;

  const graph = modelGraph(byModel, (t) => m2mOf(t, byModel));
  const orderingFields = (viewset.ordering_fields ?? []).map((name) => ({ name, ...orderingColumn(d, graph, name) }));
  const defaultOrdering = viewset.default_ordering
    ? viewset.default_ordering.split(',').map((term) => ({
        ...orderingColumn(d, graph, term.replace(/^-/, '')),
        order: term.startsWith('-') ? ('desc' as const) : ('asc' as const),
      }))
    : [];

  const operations = operationsOf(names, viewset, writeAuth);
  return {
    model: d.model,
    snake: names.snake,
    table: d.table,
    verboseName: names.verboseName,
    verboseNamePlural: names.verboseNamePlural,
    verboseKey: names.verboseName.replace(/ /g, '_'),
    classKey: names.snake,
    base: names.base.name,
    moduleName: d.table,
    tag: names.tag,
    specFile: d.described.spec.relPath,
    hooks: d.spec.hooks,
    hookRefs: d.described.hooks,
    pk: d.fields[0],
    fields: d.fields,
    m2m,
    reverse,
    indexes: names.indexes.map(({ name, columns, unique, entry }) => ({ name, columns, unique, source: entry })),
    softDelete: softDeleteOf(d, viewset, writeAuth),
    schemas,
    hasDetail: detail !== undefined,
    responses: { create: responseSchema(ctx, schemas, 'create'), update: responseSchema(ctx, schemas, 'update') },
    nestedWrites: { create: [], update: [] },
    nestedResults: {},
    operations,
    bulk: bulkOf(names, viewset, operations),
    bulkKey: names.bulk.some((b) => b.kind !== 'create') ? bulkKey(d) : null,
    bulkUpdateItem: names.bulk.some((b) => b.kind === 'update') ? bulkUpdateItem(d, schemas.update) : null,
    pagination: paginationOf(viewset.pagination_class),
    ordering: { fields: orderingFields, default: defaultOrdering },
    requireUpdateFields: viewset.require_update_fields === true,
    errorSchema: viewset.error_schema
      ? manualSchema(ctx, viewset.error_schema.name ?? `${d.model}Error`, 'out', viewset.error_schema)
      : null,
    lifecycle: viewset.lifecycle ?? {},
    querysetRequest: viewset.queryset_request,
    normalizeInput: viewset.normalize_input,
    querysetWrite: viewset.queryset_write ?? viewset.queryset_request,
    objectPermission: viewset.has_object_permission,
    actions: actionsOf(names, viewset, writeAuth),
    relations: relationsOf(ctx, viewset, m2m, writeAuth),
    expand: Object.entries(viewset.expand ?? {}).map(([name, spec]) =>
      schemaFieldFor(ctx, lookup(ctx, name), 'out', spec.fields, spec.limit),
    ),
    fieldSelection: viewset.field_selection === true,
    requireIfMatch: viewset.require_if_match === true,
    extraFields: viewset.extra_fields ?? extraFields,
    search: viewset.search_fields
      ? { fields: viewset.search_fields.map((name) => ({ name, lookup: compileLookup(graph, d.model, `${name}__icontains`) })) }
      : null,
    filters: buildFilters(viewset, d.model, graph),
    endpoints: endpointsOf(
      viewset.endpoints ?? [],
      names.tag,
      (i) => ['viewset', 'endpoints', i, 'handler'],
      d.described.spec.file,
      writeAuth,
    ),
  };
}
