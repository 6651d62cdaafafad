/**
 * The viewset's own options: settings only for operations its class serves, `disable`, bulk routes
 * that repeat a served operation, and a soft delete's field; then the list, schema, relation and
 * filter checks of the other files, in the order they read the viewset.
 */
import type { YamlPath } from '../../load/load';
import { OPERATIONS } from '../meta-schema';
import {
  DEFAULT_ACTION_METHODS,
  DEFAULT_VIEWSET_CLASS,
  OPERATION_AUTH_KEYS,
  softDeleteFieldName,
  VIEWSET_OPERATIONS,
} from '../viewset-defaults';
import { didYouMean } from '../suggest';
import { checkExpand } from './check-expand';
import { checkCursorOrdering, checkOrdering, checkPaginatedActions, checkSearchField } from './check-list';
import { checkLookups } from './check-lookups';
import { checkQueryParams } from './check-query-params';
import { checkM2mRelations } from './check-relations';
import { checkManualSchema, checkSerializerClass, SCHEMA_ROLES } from './check-schemas';
import { asRec, asStr, type Ctx, eachEntry, eachItem, has, isRec, listWords, type Rec, report } from './context';
import type { Resource } from './resources';

/** The operations a viewset class serves; undefined for a name that is no class. */
const operationsOf = (cls: string): readonly string[] | undefined => (VIEWSET_OPERATIONS as Record<string, readonly string[]>)[cls];

/** Each `<method>_auth` key with the operations whose authentication it sets. */
const AUTH_OPERATIONS = [...new Set(Object.values(OPERATION_AUTH_KEYS))].map((key) => ({
  key,
  operations: OPERATIONS.filter((op) => OPERATION_AUTH_KEYS[op] === key),
}));

/** Every check of a resource's viewset: its own options here, the rest in the files named above. */
export function checkViewset(ctx: Ctx, res: Resource, vs: Rec): void {
  checkViewsetClass(ctx, res, vs);
  checkDisable(ctx, res, vs);
  checkBulk(ctx, res, vs);
  checkOrdering(ctx, res, vs);
  checkCursorOrdering(ctx, res, vs);
  checkPaginatedActions(ctx, res, vs);
  eachItem(vs.search_fields, ['viewset', 'search_fields'], (name, at) => {
    if (typeof name === 'string') checkSearchField(ctx, res, name, at);
  });
  const classAt = ['viewset', 'serializer_class'];
  if (isRec(vs.serializer_class)) checkSerializerClass(ctx, res.spec, res, classAt, vs.serializer_class, "this resource's model");
  eachEntry(vs, ['viewset'], (name, value, at) => {
    const role = SCHEMA_ROLES[name];
    if (role && isRec(value)) checkManualSchema(ctx, res.spec, res, at, value, `viewset ${name}`, role);
  });
  checkM2mRelations(ctx, res, vs);
  checkExpand(ctx, res, vs);
  checkSoftDelete(ctx, res, vs);
  checkQueryParams(ctx, res, vs);
  checkLookups(ctx, res, vs);
  if (has(vs, 'date_compare_attr') && !(Array.isArray(vs.filter_mixins) && vs.filter_mixins.includes('DateFilterViewSetMixin'))) {
    report(
      ctx,
      res.spec,
      ['viewset', 'date_compare_attr'],
      'date_compare_attr is the operator of DateFilterViewSetMixin: add it to filter_mixins, or remove this',
      true,
    );
  }
}

/** Operation settings (auth, overrides, decorators, docs) for operations the viewset class lacks. */
function checkViewsetClass(ctx: Ctx, res: Resource, vs: Rec): void {
  const cls = asStr(vs.class);
  const ops = cls ? operationsOf(cls) : undefined;
  if (!cls || !ops) return;
  const lacks = (wanted: readonly string[]) => !wanted.some((op) => ops.includes(op));
  const reject = (at: YamlPath, wanted: readonly string[]) =>
    report(ctx, res.spec, at, `${cls} has no ${listWords(wanted)} operation: remove "${at[at.length - 1]}"`, true);
  for (const { key, operations } of AUTH_OPERATIONS) if (has(vs, key) && lacks(operations)) reject(['viewset', key], operations);
  for (const op of OPERATIONS) {
    if (ops.includes(op)) continue;
    if (has(vs, `${op}_docs`)) reject(['viewset', `${op}_docs`], [op]);
    if (has(vs, `schema_${op}_out`)) reject(['viewset', `schema_${op}_out`], [op]);
    if (has(asRec(vs.permission_roles) ?? {}, op)) reject(['viewset', 'permission_roles', op], [op]);
    if (has(asRec(vs.operation_throttles) ?? {}, op)) reject(['viewset', 'operation_throttles', op], [op]);
    if (has(asRec(vs.overrides) ?? {}, op)) reject(['viewset', 'overrides', op], [op]);
    if (has(asRec(vs.extra_decorators) ?? {}, op)) reject(['viewset', 'extra_decorators', op], [op]);
  }
}

/**
 * `soft_delete`: the viewset deletes (it changes that operation), and its field is a nullable
 * datetime without a value of its own (no default, no auto_now); no detail action takes the
 * restore's operation id or the hard delete's path.
 */
function checkSoftDelete(ctx: Ctx, res: Resource, vs: Rec): void {
  const name = softDeleteFieldName(vs.soft_delete);
  if (name === undefined || res.opaque) return;
  const spec = asRec(vs.soft_delete);
  const at: YamlPath = spec && has(spec, 'field') ? ['viewset', 'soft_delete', 'field'] : ['viewset', 'soft_delete'];
  const cls = asStr(vs.class) ?? DEFAULT_VIEWSET_CLASS;
  const disabled = Array.isArray(vs.disable) ? vs.disable : [];
  if (!(operationsOf(cls) ?? []).includes('delete')) {
    report(
      ctx,
      res.spec,
      ['viewset', 'soft_delete'],
      `soft_delete changes the delete operation, and ${cls} has none: remove soft_delete`,
      true,
    );
  } else if (disabled.includes('delete') || disabled.includes('all')) {
    report(
      ctx,
      res.spec,
      ['viewset', 'soft_delete'],
      'soft_delete changes the delete operation, and disable removes it: remove soft_delete or enable delete',
      true,
    );
  }
  const field = res.fields.get(name);
  if (!field) {
    const hint = didYouMean(name, res.fields.keys()) || `; add it: ${name}: {type: datetime, null: true}`;
    report(ctx, res.spec, at, `soft_delete field "${name}" is not a field of ${res.name}${hint}`, !spec || !has(spec, 'field'));
    return;
  }
  const marks = `field "${name}" marks soft-deleted rows (viewset soft_delete)`;
  if (field.type !== undefined && field.type !== 'datetime') {
    report(ctx, res.spec, ['fields', name, 'type'], `${marks}, so it must be a datetime, not ${field.type}`);
    return;
  }
  if (field.spec.null !== true)
    report(ctx, res.spec, ['fields', name], `${marks}, so it must allow null (null: true): a live row has none`, true);
  for (const option of ['default', 'auto_now', 'auto_now_add', 'unique', 'primary_key']) {
    if (has(field.spec, option) && field.spec[option] !== false && field.spec[option] !== null) {
      report(ctx, res.spec, ['fields', name, option], `${marks}: only DELETE sets it, so it takes no ${option}`, true);
    }
  }
  const hard = spec && has(spec, 'hard_delete_roles');
  eachEntry(vs.actions, ['viewset', 'actions'], (action, value, actionAt) => {
    const a = asRec(value);
    if (a?.detail === false) return;
    const methods: readonly unknown[] = Array.isArray(a?.methods) ? a.methods : DEFAULT_ACTION_METHODS;
    if (action === 'restore') {
      report(
        ctx,
        res.spec,
        actionAt,
        'action "restore" takes the operation id of the soft delete\'s restore (POST /{base}/{pk}/restore/): rename it',
        true,
      );
    } else if (hard && action === 'hard' && methods.includes('delete')) {
      report(
        ctx,
        res.spec,
        actionAt,
        'action "hard" would answer DELETE /{base}/{pk}/hard/, the hard delete of soft_delete: rename it',
        true,
      );
    }
  });
}

/** Key types a path segment `bulk` cannot be: `/{base}/bulk/` is never an item's path. */
const NUMERIC_OR_UUID_KEYS = ['integer', 'big_integer', 'uuid'];

/**
 * Bulk operations need the single-item operation they repeat; bulk update and delete need a key that
 * cannot be `bulk`, else `PATCH /{base}/bulk/` would take the place of that item's own route.
 */
function checkBulk(ctx: Ctx, res: Resource, vs: Rec): void {
  const bulk = asRec(vs.bulk);
  if (!bulk) return;
  const cls = asStr(vs.class) ?? DEFAULT_VIEWSET_CLASS;
  const served = operationsOf(cls) ?? [];
  const disabled = Array.isArray(vs.disable) ? vs.disable : [];
  eachItem(bulk.operations, ['viewset', 'bulk', 'operations'], (op, at) => {
    if (typeof op !== 'string') return;
    if (!served.includes(op)) {
      report(ctx, res.spec, at, `bulk ${op} repeats the ${op} operation, which ${cls} has not: remove "${op}"`);
    } else if (disabled.includes(op) || disabled.includes('all')) {
      report(ctx, res.spec, at, `bulk ${op} repeats the ${op} operation, which disable turns off: remove "${op}" here or from disable`);
    } else if (op !== 'create' && !NUMERIC_OR_UUID_KEYS.includes(res.pk.type ?? '')) {
      report(
        ctx,
        res.spec,
        at,
        `bulk ${op} would take ${op === 'update' ? 'PATCH' : 'DELETE'} /{base}/bulk/ from the ${res.name} whose key is "bulk": ` +
          `bulk update and delete need an integer, big_integer or uuid primary key ("${res.pk.name}" is a ${res.pk.type ?? 'string'})`,
      );
    }
  });
}

function checkDisable(ctx: Ctx, res: Resource, vs: Rec): void {
  if (Array.isArray(vs.disable) && vs.disable.includes('all') && vs.disable.length > 1) {
    report(ctx, res.spec, ['viewset', 'disable'], '"all" already disables every operation: remove the other entries');
  }
}
