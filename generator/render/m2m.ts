/**
 * View pieces of many-to-many relation endpoints (routes.ts) and their data (queries.ts).
 */
import type { Relation, Resource, ServiceModel } from '../model';
import { camelCase, docLine, literal, pascalCase, str } from '../names';
import { authExpr, viewExpr, type HookScope } from './hooks';

/** A query-string parameter's Zod schema: typed from its spec, `null` default = optional. */
export function queryParamZod(kind: string, defaultValue: unknown): string {
  const base: Record<string, string> = {
    str: 'z.string()',
    int: 'fromString.int()',
    float: 'fromString.float()',
    bool: 'fromString.bool()',
    date: 'fromString.date()',
    datetime: 'fromString.datetime()',
    uuid: 'z.uuid()',
    decimal: 'fromString.float()',
  };
  const expr = base[kind] ?? 'z.string()';
  return defaultValue === null || defaultValue === undefined ? `${expr}.optional()` : `${expr}.default(${literal(String(defaultValue))})`;
}

export const relationConst = (rel: Relation) => `${rel.relatedName.toUpperCase()}_RELATION`;

function keySchema(target: Resource): string {
  const pk = target.pk;
  if (pk.type === 'integer') return 'intInput(-2147483648, 2147483647)';
  if (pk.type === 'big_integer') return `intInput(${Number.MIN_SAFE_INTEGER}, ${Number.MAX_SAFE_INTEGER})`;
  if (pk.type === 'uuid') return 'uuidInput()';
  return pk.maxLength ? `z.string().min(1).max(${pk.maxLength})` : 'z.string().min(1)';
}

export function relationsRouteView(r: Resource, model: ServiceModel, scope: HookScope) {
  return r.relations.map((rel) => {
    const target = model.resources.find((x) => x.model === rel.target)!;
    const targetModule = `${camelCase(target.moduleName)}Q`;
    const filterColumns = rel.filters
      .map((f) => {
        const field = target.fields.find((x) => x.name === f.name);
        return field ? `${f.name}: { column: ${str(field.column)}, match: '${f.kind === 'str' ? 'contains' : 'exact'}' }` : undefined;
      })
      .filter(Boolean)
      .join(', ');
    const params = rel.filters.map((f) => `${f.name}: ${queryParamZod(f.kind, f.default)}`).join(', ');
    const pageSchema = r.pagination ? 'paginator.querySchema' : 'z.object({})';
    const pascal = pascalCase(rel.relatedName);
    return {
      base: r.base,
      path: rel.path,
      appendSlash: rel.appendSlash,
      model: r.model,
      tag: str(r.tag),
      errorSchema: r.errorSchema ? r.errorSchema.name : 'GenericMessageSchema',
      get: rel.get,
      manage: rel.add || rel.remove,
      add: rel.add,
      remove: rel.remove,
      getAuth: authExpr(rel.getAuth, scope),
      postAuth: authExpr(rel.postAuth, scope),
      getSecured: rel.getAuth !== null,
      postSecured: rel.postAuth !== null,
      getView: viewExpr(rel.getOperationId, rel.getDecorators, scope),
      postView: viewExpr(rel.manageOperationId, rel.postDecorators, scope),
      getOperationId: rel.getOperationId,
      manageOperationId: rel.manageOperationId,
      getSummary: str(docLine(`List the ${rel.relatedName} of a ${r.verboseName}.`)),
      postSummary: str(docLine(`Add or remove ${rel.relatedName} of a ${r.verboseName}.`)),
      queryConst: `${pascal}Query`,
      bodyConst: `${pascal}Body`,
      bodyName: `${r.model}${pascal}Body`,
      querySchema: params ? `${pageSchema}.extend({ ${params} })` : pageSchema,
      keySchema: keySchema(target),
      specConst: relationConst(rel),
      filterColumns,
      queryParamsHandler: rel.queryParamsHandler,
      queryHandler: rel.queryHandler,
      paginated: r.pagination !== null,
      itemColumns: rel.itemSchemaIsTargetOut ? `${targetModule}.OUT_COLUMNS` : `q.${rel.relatedName.toUpperCase()}_ITEM_COLUMNS`,
      itemShape: rel.itemSchemaIsTargetOut ? `${targetModule}.shape${rel.itemSchema.name}` : `q.shape${rel.itemSchema.name}`,
      getResponse: r.pagination
        ? `paginator.responseSchema(${rel.itemSchemaIsTargetOut ? `${targetModule}Schemas.${rel.itemSchema.name}` : rel.itemSchema.name})`
        : `z.array(${rel.itemSchemaIsTargetOut ? `${targetModule}Schemas.${rel.itemSchema.name}` : rel.itemSchema.name})`,
      targetImport: rel.itemSchemaIsTargetOut ? { name: targetModule, module: target.moduleName } : undefined,
    };
  });
}

/** The relation constants of queries.ts. */
export function relationsQueriesView(r: Resource, model: ServiceModel) {
  return r.relations.map((rel) => {
    const target = model.resources.find((x) => x.model === rel.target)!;
    return {
      constName: relationConst(rel),
      joinTable: rel.m2m.joinTable,
      ownColumn: rel.m2m.ownColumn,
      otherColumn: rel.m2m.otherColumn,
      table: target.table,
      pk: target.pk.column,
      label: target.verboseName,
    };
  });
}
