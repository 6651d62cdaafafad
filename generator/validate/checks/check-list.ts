/**
 * What a list is ordered, paged and searched by: ordering fields of the resource or, through
 * foreign keys, of a related row; a cursor-paged list's fields that compare the same on both
 * databases; paginated actions that answer a page; search fields that end at a value.
 */
import type { YamlPath } from '../../load/load';
import { DEFAULT_ACTION_METHODS } from '../viewset-defaults';
import { asRec, asStr, type Ctx, eachEntry, eachItem, has, type Rec, report } from './context';
import { fieldOf, RELATION_TYPES, relationTarget, type Resource } from './resources';

export function checkOrdering(ctx: Ctx, res: Resource, vs: Rec): void {
  const orderable = (name: string, label: string, at: YamlPath) => {
    if (name.includes('__')) return checkRelatedOrdering(ctx, res, name, label, at);
    const field = fieldOf(ctx, res.spec, res, name, label, at);
    if (field?.type === 'many_to_many') report(ctx, res.spec, at, `cannot order by many_to_many field "${name}"`);
    else if (field?.type === 'list') report(ctx, res.spec, at, `cannot order by list field "${name}": databases order lists differently`);
  };
  eachItem(vs.ordering_fields, ['viewset', 'ordering_fields'], (name, at) => {
    if (typeof name === 'string') orderable(name, 'ordering field', at);
  });
  const at = ['viewset', 'default_ordering'];
  for (const name of defaultOrderingFields(vs)) {
    orderable(name, 'default ordering field', at);
    if (Array.isArray(vs.ordering_fields) && !vs.ordering_fields.includes(name) && (res.fields.has(name) || name.includes('__'))) {
      report(ctx, res.spec, at, `default ordering field "${name}" is not in ordering_fields: add it there`);
    }
  }
}

/**
 * A cursor-paged list (CursorPagination) is read by position in its order, so each field it may be
 * ordered by must be a column of its own table that compares the same on both databases: never null
 * (SQLite and PostgreSQL sort NULLs at opposite ends), and not json.
 */
export function checkCursorOrdering(ctx: Ctx, res: Resource, vs: Rec): void {
  if (paginatorName(vs.pagination_class) !== 'CursorPagination') return;
  const check = (name: string, label: string, at: YamlPath) => {
    if (name.includes('__')) {
      return report(
        ctx,
        res.spec,
        at,
        `${label} "${name}" is a field of a related row: a CursorPagination list orders by fields of its own table; order by a field of ${res.name}, or use another paginator`,
      );
    }
    const field = res.fields.get(name);
    if (field?.spec.null === true) {
      report(
        ctx,
        res.spec,
        at,
        `${label} "${name}" may be null: a CursorPagination list orders by fields without nulls (SQLite and PostgreSQL sort them differently); make the field non-null, or use another paginator`,
      );
    } else if (field?.type === 'json') {
      report(
        ctx,
        res.spec,
        at,
        `${label} "${name}" is a json field: a CursorPagination list cannot compare its values; use another ordering field`,
      );
    }
  };
  const fields = Array.isArray(vs.ordering_fields) ? vs.ordering_fields : [];
  eachItem(vs.ordering_fields, ['viewset', 'ordering_fields'], (name, at) => {
    if (typeof name === 'string') check(name, 'ordering field', at);
  });
  for (const name of defaultOrderingFields(vs)) {
    // One also in ordering_fields is reported there.
    if (!fields.includes(name)) check(name, 'default ordering field', ['viewset', 'default_ordering']);
  }
}

/** The fields `default_ordering` orders by (`-created_at,title` → created_at, title); none without one. */
function defaultOrderingFields(vs: Rec): string[] {
  const ordering = asStr(vs.default_ordering);
  return ordering === undefined ? [] : ordering.split(',').map((part) => part.trim().replace(/^-/, ''));
}

/** The class a `pagination_class` or `paginate` names, or undefined when it names none. */
function paginatorName(value: unknown): string | undefined {
  return typeof value === 'string' ? value : asStr(asRec(value)?.class);
}

/**
 * `paginate` on an action: only a list-level GET action answers a page of the list (a detail
 * action has one record, a write answers what it did), and the page is its answer, so no
 * `response`. A CursorPagination action reads by position in `default_ordering` alone (it takes
 * no `?ordering=`), so that ordering must be one a cursor can hold: the viewset's own columns,
 * never null, not json.
 */
export function checkPaginatedActions(ctx: Ctx, res: Resource, vs: Rec): void {
  eachEntry(vs.actions, ['viewset', 'actions'], (name, value, at) => {
    const action = asRec(value);
    if (!action || action.paginate === undefined || action.paginate === null) return;
    const paginateAt = [...at, 'paginate'];
    if (action.detail !== false) {
      return report(
        ctx,
        res.spec,
        paginateAt,
        `action "${name}" acts on one record: only a list-level action (detail: false) is paginated; add detail: false, or remove paginate`,
        true,
      );
    }
    const methods: readonly unknown[] = Array.isArray(action.methods) ? action.methods : DEFAULT_ACTION_METHODS;
    if (methods.length !== 1 || methods[0] !== 'get') {
      const given = has(action, 'methods') ? `methods [${methods.join(', ')}]` : 'the default method post';
      return report(
        ctx,
        res.spec,
        has(action, 'methods') ? [...at, 'methods'] : paginateAt,
        `paginated action "${name}" must answer GET alone (methods: [get]), not ${given}: a page is read, never written`,
        !has(action, 'methods'),
      );
    }
    if (has(action, 'response') && action.response !== null) {
      report(
        ctx,
        res.spec,
        [...at, 'response'],
        `paginated action "${name}" answers a page of the list's items (the read schema): remove response`,
        true,
      );
    }
    if (paginatorName(action.paginate) !== 'CursorPagination' || paginatorName(vs.pagination_class) === 'CursorPagination') return;
    // A cursor-paged list reports its own ordering fields already (checkCursorOrdering).
    for (const field of defaultOrderingFields(vs)) {
      const why = field.includes('__')
        ? 'is a field of a related row'
        : res.fields.get(field)?.spec.null === true
          ? 'may be null (SQLite and PostgreSQL sort nulls differently)'
          : res.fields.get(field)?.type === 'json'
            ? 'is a json field, whose values cannot be compared'
            : undefined;
      if (why) {
        report(
          ctx,
          res.spec,
          paginateAt,
          `action "${name}" is paged by CursorPagination, which reads in default_ordering, and default ordering field "${field}" ${why}: order by non-null fields of ${res.name}, or use another paginator`,
        );
      }
    }
  });
}

/**
 * An ordering field of a related row, `author__username`: foreign keys, then a field of the last
 * related resource. A many-to-many on the way would give a row several values to order by.
 */
function checkRelatedOrdering(ctx: Ctx, res: Resource, name: string, label: string, at: YamlPath): void {
  const segments = name.split('__');
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const field = fieldOf(ctx, res.spec, current, seg, `${label} "${name}": field`, at);
    if (!field) return;
    if (field.type === 'many_to_many')
      return report(
        ctx,
        res.spec,
        at,
        `${label} "${name}": ${seg} is a many_to_many field, with several values per row; only foreign keys can be followed`,
      );
    if (i === segments.length - 1) return;
    if (field.type !== 'foreign_key')
      return report(ctx, res.spec, at, `${label} "${name}": ${seg} is a ${field.type} field, not a foreign key to follow`);
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return;
    current = target;
  }
}

/**
 * A search field: a field of the resource, or of a related one through foreign keys and
 * many-to-manys (`author__username`, `tags__name`), ending at a field that holds a value.
 */
export function checkSearchField(ctx: Ctx, res: Resource, name: string, at: YamlPath): void {
  const segments = name.split('__');
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const field = fieldOf(ctx, res.spec, current, seg, segments.length > 1 ? `search field "${name}": field` : 'search field', at);
    if (!field) return;
    const relation = RELATION_TYPES.includes(field.type ?? '');
    if (i === segments.length - 1) {
      if (relation)
        report(ctx, res.spec, at, `search field "${name}" is a ${field.type}: search a field of the related resource (${name}__<field>)`);
      else if (field.type === 'list')
        report(ctx, res.spec, at, `search field "${name}" is a list field: filter it with a contains or overlap lookup instead`);
      return;
    }
    if (!relation)
      return report(
        ctx,
        res.spec,
        at,
        `search field "${name}": ${seg} is a ${field.type} field, not a relation to follow (write the field alone; lookups like __icontains are implied)`,
      );
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return;
    current = target;
  }
}
