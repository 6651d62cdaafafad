/**
 * View of a resource's `queries.ts`: its table and the type of its rows, the record hooks receive,
 * the functions that shape rows into response schemas (loading related rows with one query per
 * relation), the column values of create and update bodies with the checks of their related keys,
 * and its relation constants. Every row is read and written under its table's row type, so a
 * misspelt column fails to compile.
 */
import type { Field, FieldType, OperationKind, Relation, Resource, SchemaField, SchemaModel, ServiceModel } from '../model/model';
import { camelCase, literal, pascalCase, str } from '../model/names';
import { header, hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { andList, aOrAn } from './english';
import { Imports } from './imports';
import { readColumn, readValue } from './values';

const list = (names: readonly string[]) => names.map((n) => str(n)).join(', ');

/** `ArticleDetail` → `ARTICLE_DETAIL`: the name of a module constant. */
const constCase = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** A related model's 404 key, as a constant of queries.ts. */
const modelConst = (model: string) => `${constCase(model)}_MODEL`;

/** The related keys a body names, each checked before a write: a 404 when one names no row. */
export function relatedKeyChecks(s: SchemaModel) {
  return s.fields.flatMap((f) => {
    if (f.kind === 'foreign_key' || f.kind === 'nested_one') {
      const rel = f.field!.relation!;
      return [
        {
          field: f.name,
          type: tsType(f.field!),
          table: rel.targetTable,
          pk: rel.targetPk.column,
          many: false,
          model: modelConst(rel.target),
        },
      ];
    }
    if (f.kind === 'many_to_many' || f.kind === 'nested_many') {
      const m = f.m2m!;
      return [
        {
          field: f.name,
          type: `readonly ${tsType(m.targetPk)}[]`,
          table: m.targetTable,
          pk: m.targetPk.column,
          many: true,
          model: modelConst(m.target),
        },
      ];
    }
    return [];
  });
}

/**
 * Whether the create's insert checks the related keys its body names itself (`insertReferences`,
 * the runtime's `insertRow`) instead of a query each before it: when each is a foreign key. A
 * many-to-many list is checked first, so every key stays checked in the body's order.
 */
export function insertChecksReferences(s: SchemaModel): boolean {
  const checks = relatedKeyChecks(s);
  return checks.length > 0 && checks.every((c) => !c.many);
}

/** `insertReferences`: the related rows the create's body names, for its insert to check. */
function insertReferencesView(s: SchemaModel, imports: Imports) {
  imports.runtimeType('InsertReference');
  return { schema: imports.type('./schemas', s.name), references: relatedKeyChecks(s) };
}

/**
 * `checkRelated`: the checks of the related keys the written bodies name, each key once, in one
 * function that create and update both call; undefined when no body names one.
 */
function relatedCheckView(written: readonly SchemaModel[], imports: Imports) {
  const checks = [...new Map(written.flatMap(relatedKeyChecks).map((c) => [c.field, c])).values()];
  if (checks.length === 0) return undefined;
  imports.runtime('NotFoundError');
  imports.runtimeType('RequestContext');
  if (checks.some((c) => c.many)) imports.runtime('missingRelatedKeys');
  if (checks.some((c) => !c.many)) imports.runtime('relatedExists');
  return {
    schemas: written.map((s) => imports.type('./schemas', s.name)).join(' or '),
    keys: checks.map((c) => `${c.field}?: ${c.type}`).join('; '),
    checks,
  };
}

/** The name of a resource's row type: `ArticleRow`. */
export const rowTypeName = (r: Resource) => `${r.model}Row`;

/** A resource's row type as `self`'s queries.ts names it: its own, or imported from the resource's queries.ts. */
function rowTypeOf(r: Resource, self: Resource, imports: Imports): string {
  return r === self ? rowTypeName(r) : imports.type(`../${r.moduleName}/queries`, rowTypeName(r));
}

/**
 * The TypeScript type of a column's values as the database reads and writes them: booleans may be
 * 0 and 1 (SQLite), dates and times strings or Dates, decimals strings or numbers, JSON text or
 * parsed values, lists arrays or their JSON text; a foreign key holds its target key's type, a field with choices one of them.
 */
function columnType(f: Field): string {
  // A list is an array on PostgreSQL, its JSON text elsewhere.
  if (f.list) return `${LIST_ITEM_TS[f.list.of]}[] | string${f.nullable ? ' | null' : ''}`;
  const base = f.choices
    ? f.choices.map((c) => literal(c)).join(' | ')
    : f.relation
      ? columnType(f.relation.targetPk).replace(' | null', '')
      : (COLUMN_TYPES[f.type] ?? 'string');
  return f.nullable && base !== 'unknown' ? `${base} | null` : base;
}

const COLUMN_TYPES: Partial<Record<FieldType, string>> = {
  integer: 'number',
  big_integer: 'number',
  float: 'number',
  boolean: 'boolean | number',
  date: 'string | Date',
  datetime: 'string | Date',
  decimal: 'string | number',
  json: 'unknown',
};

/** What the shapes of one queries.ts share: the resource it belongs to, the model, its imports and hooks. */
interface QueriesFile {
  self: Resource;
  model: ServiceModel;
  imports: Imports;
  hooks: (name: string) => string;
  /** The loaders printed so far, by what they print (`loaderKey`): the constant each is printed as. */
  loaderNames: Map<string, string>;
  /** The column lists printed so far, by row type and columns: the constant each is printed as. */
  columnNames: Map<string, string>;
  /** The fields of `to<Model>Record`, with the expression of each from the row. */
  record: { name: string; expr: string }[];
}

/**
 * Whether a shape of `self`'s rows is `to<Model>Record`: the same fields in the same order, each read
 * alike, and typed so that the record is the schema (no choices, which the schema narrows to its
 * values; no null in the record where the schema has none).
 */
function shapeIsRecord(s: SchemaModel, fields: readonly { name: string; expr: string }[], file: QueriesFile): boolean {
  const { record } = file;
  return (
    fields.length === record.length &&
    fields.every((f, i) => f.name === record[i].name && f.expr === record[i].expr) &&
    s.fields.every((f) => !f.choices && !f.field?.choices && !(f.field?.nullable && !f.nullable))
  );
}

/** What a loader prints, but its name and doc: two loaders that print the same are one constant. */
function loaderKey(l: Loader): string {
  const {
    constName: _name,
    varName: _var,
    doc: _doc,
    call: _call,
    relationKeys: _keys,
    keyColumn: _column,
    shared: _shared,
    ...printed
  } = l;
  return JSON.stringify(printed);
}

/**
 * The constant a loader is printed as: the first loader of the file that prints the same (a detail's
 * relation and its `?expand=`, say), else its own, printed here.
 */
function claimLoader(l: Loader, file: QueriesFile): Loader {
  const key = loaderKey(l);
  const first = file.loaderNames.get(key);
  if (first === undefined) {
    file.loaderNames.set(key, l.constName);
    return l;
  }
  return { ...l, constName: first, call: l.call.replace(l.constName, first), shared: true };
}

/**
 * The columns constant `name` of `row` lists `columns`: `[...]`, or the first constant of the file
 * that lists the same columns in the same order under the same row type.
 */
function claimColumns(name: string, row: string, columns: string, file: QueriesFile): { columnsAlias?: string } {
  const key = `${row}: ${columns}`;
  const first = file.columnNames.get(key);
  if (first === undefined) file.columnNames.set(key, name);
  return first === undefined ? {} : { columnsAlias: first };
}

interface Loader {
  constName: string;
  varName: string;
  doc: string;
  m2m: boolean;
  joinTable?: string;
  ownColumn?: string;
  /** A many-to-many relation's records: the most one item carries. */
  m2mLimit?: number;
  otherColumn?: string;
  table: string;
  pk: string;
  columns: string;
  fields: { name: string; expr: string }[];
  /** A list of keys shapes each related row to its key alone. */
  keyOnly?: string;
  /** A reverse relation's children: their foreign key (or join table), order, cap and soft delete column. */
  reverse?: { owner?: string; through?: string; ordering: string; limit: number; deletedColumn?: string };
  /** The spec type the loader satisfies: `ForeignSpec<unknown, UserRow>`. */
  spec: string;
  call: string;
  /** The keys a foreign key or many-to-many relation reads for the rows: loaded with the shape's other such relations. */
  relationKeys?: string;
  /** A foreign key's column, holding the related record's key; none for a relation listing what refers to the row. */
  keyColumn?: string;
  /** Printed before, under `constName`: not printed again. */
  shared?: boolean;
}

/**
 * The loader of a relation field (`nested_one`, `many_to_many`, `nested_many`, `reverse`,
 * `nested_reverse`) of `r`'s rows, with the expression of one row's value from the loaded map
 * (`varName`) and the column of `r` it needs beside the key; undefined for any other field.
 */
function relationLoader(r: Resource, f: SchemaField, constName: string, varName: string, file: QueriesFile) {
  const found = relationLoaderOf(r, f, constName, varName, file);
  return found && { ...found, loader: claimLoader(found.loader, file) };
}

function relationLoaderOf(r: Resource, f: SchemaField, constName: string, varName: string, { self, model, imports }: QueriesFile) {
  const rowOf = (target: string) =>
    rowTypeOf(
      model.resources.find((x) => x.model === target)!,
      self,
      imports,
    );
  const nestedOf = (fields: SchemaField[]) => fields.map((n) => ({ name: n.name, expr: readValue(n, n.field!.column, imports) }));
  if (f.kind === 'nested_one') {
    const fk = f.field!;
    const rel = fk.relation!;
    const nestedCols = new Set([rel.targetPk.column, ...f.nested!.fields.map((n) => n.field!.column)]);
    const loader: Loader = {
      constName,
      varName,
      doc: `${f.name}: the related ${rel.target} with ${andList(f.nested!.fields.map((n) => n.name))}.`,
      m2m: false,
      table: rel.targetTable,
      pk: rel.targetPk.column,
      columns: list([...nestedCols]),
      fields: nestedOf(f.nested!.fields),
      keyOnly: undefined,
      spec: `${imports.runtimeType('ForeignSpec')}<unknown, ${rowOf(rel.target)}>`,
      call: `${imports.runtime('loadForeign')}(db, ${constName}, rows.map((row) => row.${fk.column}))`,
      relationKeys: `rows.map((row) => row.${fk.column})`,
      keyColumn: fk.column,
    };
    const expr = fk.nullable
      ? `row.${fk.column} === null ? null : (${varName}.get(row.${fk.column}) ?? null)`
      : `${imports.runtime('related')}(${varName}, row.${fk.column})`;
    return { loader, expr, column: fk.column };
  }
  if (f.kind === 'reverse' || f.kind === 'nested_reverse') {
    const rel = f.reverse!;
    const child = model.resources.find((x) => x.model === rel.from)!;
    const nested = f.kind === 'nested_reverse' ? f.nested!.fields : [];
    const nestedCols = new Set([child.pk.column, ...nested.map((n) => n.field!.column)]);
    // The child's default ordering (columns of its own rows), then its key.
    const ordering = child.ordering.default.filter((o) => !o.hops?.length).map((o) => ({ column: o.column, order: o.order }));
    if (!ordering.some((o) => o.column === child.pk.column)) ordering.push({ column: child.pk.column, order: 'asc' });
    const m = rel.m2m;
    const loader: Loader = {
      constName,
      varName,
      doc: `${f.name}: the ${child.verboseNamePlural} ${m ? `linked here through ${m.joinTable}` : `whose ${rel.field!.name} is this ${r.verboseName}`}, ${f.kind === 'nested_reverse' ? `with ${andList(nested.map((n) => n.name))}` : 'by key'}, at most ${f.limit} each.`,
      m2m: false,
      table: child.table,
      pk: child.pk.column,
      columns: list([...nestedCols]),
      fields: nestedOf(nested),
      keyOnly: f.kind === 'reverse' ? `row.${child.pk.column}` : undefined,
      reverse: {
        owner: m ? undefined : rel.field!.column,
        through: m ? `{ table: '${m.joinTable}', childColumn: '${m.ownColumn}', parentColumn: '${m.otherColumn}' }` : undefined,
        ordering: ordering.map((o) => `{ column: '${o.column}', order: '${o.order}' }`).join(', '),
        limit: f.limit!,
        deletedColumn: child.softDelete?.field.column,
      },
      spec: `${imports.runtimeType('ReverseSpec')}<unknown, ${rowOf(child.model)}>`,
      call: `${imports.runtime('loadReverse')}(db, ${constName}, rows.map((row) => row.${r.pk.column}))`,
    };
    return { loader, expr: `${varName}.get(row.${r.pk.column}) ?? []`, column: undefined };
  }
  if (f.kind !== 'many_to_many' && f.kind !== 'nested_many') return undefined;
  const m = f.m2m!;
  const nested = f.kind === 'nested_many' ? f.nested!.fields : [];
  const nestedCols = new Set([m.targetPk.column, ...nested.map((n) => n.field!.column)]);
  const loader: Loader = {
    constName,
    varName,
    doc: `${f.name}: the related ${m.target} ${f.kind === 'nested_many' ? `records with ${andList(nested.map((n) => n.name))}, at most ${f.limit} each` : 'keys'}, through ${m.joinTable}.`,
    m2m: true,
    m2mLimit: f.kind === 'nested_many' ? f.limit : undefined,
    joinTable: m.joinTable,
    ownColumn: m.ownColumn,
    otherColumn: m.otherColumn,
    table: m.targetTable,
    pk: m.targetPk.column,
    columns: list([...nestedCols]),
    fields: nestedOf(nested),
    keyOnly: f.kind === 'many_to_many' ? `row.${m.targetPk.column}` : undefined,
    spec: `${imports.runtimeType('ManyToManySpec')}<unknown, ${rowOf(m.target)}>`,
    call: `${imports.runtime('loadManyToMany')}(db, ${constName}, rows.map((row) => row.${r.pk.column}))`,
    relationKeys: `rows.map((row) => row.${r.pk.column})`,
  };
  return { loader, expr: `${varName}.get(row.${r.pk.column}) ?? []`, column: undefined };
}

/**
 * Whether the create reads the relations of its ETag's state with its insert (`<X>_RELATIONS`, the
 * runtime's `insertRow`): when its answer carries the state's ETag and is not the detail
 * representation itself, the detail nests relations, and nothing the create does after the insert
 * writes any (no many-to-many list or child the body names, no `after_create` hook, no override).
 */
export function createReadsStateRelations(r: Resource): boolean {
  const create = r.operations.find((o) => o.kind === 'create');
  if (!create || create.override || r.lifecycle.after_create || !serves(r, 'retrieve')) return false;
  if (r.schemas.in.fields.some((f) => f.m2m) || r.nestedWrites.create.length > 0) return false;
  const answer = r.responses.create;
  if (answer.name === r.schemas.detail.name || !answer.fields.some((f) => f.name === r.pk.name)) return false;
  return r.schemas.detail.fields.some((f) => !f.compute && RELATION_KINDS.has(f.kind));
}

const RELATION_KINDS = new Set<SchemaField['kind']>(['nested_one', 'many_to_many', 'nested_many', 'reverse', 'nested_reverse']);

/**
 * Whether the retrieve reads the related records of its representation with its row (the
 * `<X>_RELATIONS` constant given to the runtime's `findVisible`): when the detail representation
 * loads two or more foreign-key or many-to-many relations together (`loadRelations`, given the row).
 */
export function retrieveReadsRelations(r: Resource): boolean {
  if (!serves(r, 'retrieve')) return false;
  return (
    r.schemas.detail.fields.filter((f) => !f.compute && (f.kind === 'nested_one' || f.kind === 'many_to_many' || f.kind === 'nested_many'))
      .length >= 2
  );
}

/** The name of the `StateRelations` constant of the state's schema (`createReadsStateRelations`, `retrieveReadsRelations`). */
export const stateRelationsOf = (r: Resource) => columnsOf(r, r.schemas.detail).replace(/_COLUMNS$/, '_RELATIONS');

/**
 * `shape<Schema>(db, rows)`: the columns it reads and the related rows it loads. A schema with
 * computed fields reads every column of the record its hooks receive, and awaits them row by row.
 * `extraColumns` are read besides (the foreign keys `?expand=` follows). With `relationsConst`, the
 * relations it loads as a `StateRelations` constant of that name.
 */
function shapeView(
  r: Resource,
  s: SchemaModel,
  columnsConst: string,
  file: QueriesFile,
  extraColumns: readonly string[] = [],
  relationsConst?: string,
) {
  const { self, imports, hooks } = file;
  const loaders: Loader[] = [];
  const computed = s.fields.some((f) => f.compute);
  const columns = new Set<string>(computed ? r.fields.map((f) => f.column) : [r.pk.column]);
  const fields = s.fields.map((f) => {
    const varName = camelCase(f.name);
    const constName = `${constCase(s.name)}_${f.name.toUpperCase()}`;
    if (f.compute) return { name: f.name, expr: `await ${hooks(f.compute)}({ instance: to${r.model}Record(row), db })` };
    if (f.kind === 'value' || f.kind === 'foreign_key') {
      const column = f.field!.column;
      columns.add(column);
      return { name: f.name, expr: readValue(f, column, imports) };
    }
    const { loader, expr, column } = relationLoader(r, f, constName, varName, file)!;
    loaders.push(loader);
    if (column) columns.add(column);
    return { name: f.name, expr };
  });
  for (const column of extraColumns) columns.add(column);
  // Foreign keys and many-to-many relations, two or more, are loaded together (one statement for one row, see loadRelations).
  const grouped = loaders.filter((l) => l.relationKeys);
  const together = grouped.length >= 2;
  const alone = together ? loaders.filter((l) => !l.relationKeys) : loaders;
  const calls = [
    ...(together
      ? [`${file.imports.runtime('loadRelations')}(db, [${grouped.map((l) => `[${l.constName}, ${l.relationKeys}]`).join(', ')}], rows)`]
      : []),
    ...alone.map((l) => l.call),
  ];
  const loaderVars = [...(together ? [`[${grouped.map((l) => l.varName).join(', ')}]`] : []), ...alone.map((l) => l.varName)].join(', ');
  const loaded = together
    ? `${andList(grouped.map((l) => l.varName))} together (loadRelations)${alone.length ? `, and ${andList(alone.map((l) => l.varName))} with one query each` : ''}`
    : `${andList(loaders.map((l) => l.varName))} with one query each`;
  // Only relations loaded together: their call alone, without Promise.all.
  const joinedOnly = together && alone.length === 0 ? { vars: grouped.map((l) => l.varName).join(', '), call: calls[0] } : undefined;
  const foreign = loaders.filter((l) => l.keyColumn);
  const children = loaders.filter((l) => !l.keyColumn);
  const relations = relationsConst && {
    name: relationsConst,
    type: `${imports.runtimeType('StateRelations')}<${rowTypeOf(r, self, imports)}>`,
    doc: [
      foreign.length ? `${andList(foreign.map((l) => l.varName))} by ${foreign.length === 1 ? 'its key' : 'their keys'}` : '',
      children.length ? `${andList(children.map((l) => l.varName))} by the row's` : '',
    ]
      .filter(Boolean)
      .join('; '),
    foreign: foreign.map((l) => `[${l.constName}, ${str(l.keyColumn!)}]`).join(', '),
    children: children.map((l) => l.constName).join(', '),
  };
  const row = rowTypeOf(r, self, imports);
  const usesDb = computed || loaders.length > 0;
  if (usesDb) imports.runtimeType('Db');
  else imports.runtime('shapeRows');
  const recordShape = !usesDb && r === self && shapeIsRecord(s, fields, file) ? `to${r.model}Record` : undefined;
  return {
    schema: imports.type('./schemas', s.name),
    row,
    computed,
    usesDb,
    recordShape,
    columnsConst,
    columns: list([...columns]),
    ...claimColumns(columnsConst, row, list([...columns]), file),
    loaders,
    calls,
    loaderVars,
    loaded,
    joinedOnly,
    fields,
    relations,
  };
}

/** `EXPANSIONS`: each relation `?expand=` may name, its loader and the value one row shows. */
function expansionsView(r: Resource, file: QueriesFile) {
  if (r.expand.length === 0) return undefined;
  const expanders = r.expand.map((f) => {
    const { loader, expr } = relationLoader(r, f, `${constCase(r.model)}_EXPAND_${f.name.toUpperCase()}`, camelCase(f.name), file)!;
    return { name: f.name, loader, expr };
  });
  return { row: rowTypeName(r), expander: file.imports.runtimeType('Expander'), expanders, loaders: expanders.map((e) => e.loader) };
}

/** The columns of `r`'s rows `?expand=` follows: the foreign keys it expands. */
const expandColumns = (r: Resource) => r.expand.filter((f) => f.kind === 'nested_one').map((f) => f.field!.column);

/** The column value of a body field. */
function writeValue(f: SchemaField, imports: Imports): string {
  const v = `data.${f.name}`;
  const field = f.field!;
  if (field.type === 'password') {
    const hash = imports.runtime('hashPassword');
    return f.required ? `await ${hash}(${v})` : `${v} === undefined ? undefined : await ${hash}(${v})`;
  }
  if (field.type === 'datetime') return `${imports.runtime('toDb')}.dateTime(${v})`;
  if (field.type === 'json') {
    const toDb = imports.runtime('toDb');
    return f.nullable ? `${v} === null ? null : ${toDb}.json(${v})` : `${toDb}.json(${v})`;
  }
  if (field.primaryKey && field.type === 'uuid') return `${v} ?? ${imports.value('node:crypto', 'randomUUID')}()`;
  return v;
}

/** Whether the column values of a body (`createValues`, `updateValues`) are made asynchronously: a password is hashed. */
export function valuesAreAsync(s: SchemaModel): boolean {
  return s.fields.some((f) => f.field?.type === 'password');
}

/** `createValues` / `updateValues`: the column values of a body. */
function writesView(r: Resource, s: SchemaModel, create: boolean, imports: Imports) {
  const values: { column: string; expr: string }[] = [];
  const inSchema = new Set(s.fields.map((f) => f.name));
  for (const f of s.fields) if (f.field) values.push({ column: f.field.column, expr: writeValue(f, imports) });
  for (const field of r.fields) {
    if (inSchema.has(field.name)) continue;
    if (create && field.primaryKey && field.type === 'uuid')
      values.push({ column: field.column, expr: `${imports.value('node:crypto', 'randomUUID')}()` });
    if ((create && field.autoNowAdd) || field.autoNow) values.push({ column: field.column, expr: `${imports.runtime('now')}()` });
  }
  imports.runtime('withoutUndefined');
  return {
    create,
    async: valuesAreAsync(s),
    schema: imports.type('./schemas', s.name),
    row: rowTypeName(r),
    fn: create ? 'createValues' : 'updateValues',
    values,
  };
}

/** The TypeScript type of a list's items in a record. */
const LIST_ITEM_TS: Record<NonNullable<Field['list']>['of'], string> = {
  string: 'string',
  integer: 'number',
  big_integer: 'number',
  float: 'number',
  boolean: 'boolean',
  uuid: 'string',
  date: 'string',
};

/** The TypeScript type of a column field's value in a record. */
function tsType(f: Field): string {
  if (f.list) return f.nullable ? `${LIST_ITEM_TS[f.list.of]}[] | null` : `${LIST_ITEM_TS[f.list.of]}[]`;
  const base = f.relation
    ? tsType(f.relation.targetPk).replace(' | null', '')
    : ['integer', 'big_integer', 'float'].includes(f.type)
      ? 'number'
      : f.type === 'boolean'
        ? 'boolean'
        : f.type === 'json'
          ? 'unknown'
          : 'string';
  return f.nullable && base !== 'unknown' ? `${base} | null` : base;
}

/**
 * The response schemas of the resource's own rows, each once with the name of its columns constant:
 * schema_out, schema_detail when it is its own, and the schemas of create and update responses
 * when they are their own (`schema_create_out`, `schema_update_out`).
 */
export function rowSchemas(r: Resource): { schema: SchemaModel; columns: string }[] {
  const out = [{ schema: r.schemas.out, columns: 'OUT_COLUMNS' }];
  if (r.hasDetail) out.push({ schema: r.schemas.detail, columns: 'DETAIL_COLUMNS' });
  for (const [kind, schema] of Object.entries(r.responses)) {
    if (!out.some((x) => x.schema === schema)) out.push({ schema, columns: `${kind.toUpperCase()}_OUT_COLUMNS` });
  }
  return out;
}

/** The columns constant of one of `rowSchemas`. */
export function columnsOf(r: Resource, s: SchemaModel): string {
  return rowSchemas(r).find((x) => x.schema === s)!.columns;
}

/** Whether the resource serves an operation of this kind. */
export const serves = (r: Resource, kind: OperationKind) => r.operations.some((o) => o.kind === kind);

export function queriesView(r: Resource, model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 2));
  imports.runtimeType('ModelInfo');
  const record = r.fields.map((f) => ({ name: f.name, type: tsType(f), expr: f.relation ? `row.${f.column}` : readColumn(f, imports) }));
  const hooks = (name: string) => `${imports.namespace(hookModuleFrom(ctx, r.hooks!, 2), 'hooks')}.${name}`;
  const file: QueriesFile = { self: r, model, imports, hooks, loaderNames: new Map(), columnNames: new Map(), record };
  const recordColumns = list(r.fields.map((f) => f.column));
  claimColumns('RECORD_COLUMNS', rowTypeName(r), recordColumns, file);
  // List and retrieve read the foreign keys `?expand=` follows, whatever their schema shows.
  const expanded = new Set([r.schemas.out, r.schemas.detail]);
  const stateRelations = createReadsStateRelations(r) || retrieveReadsRelations(r) ? stateRelationsOf(r) : undefined;
  const shapes = rowSchemas(r).map(({ schema, columns }) =>
    shapeView(
      r,
      schema,
      columns,
      file,
      expanded.has(schema) ? expandColumns(r) : [],
      schema === r.schemas.detail ? stateRelations : undefined,
    ),
  );
  for (const rel of r.relations) {
    if (rel.itemSchemaIsTargetOut) continue;
    const target = model.resources.find((x) => x.model === rel.target)!;
    shapes.push(shapeView(target, rel.itemSchema, `${rel.relatedName.toUpperCase()}_ITEM_COLUMNS`, file));
  }
  // Rendered after the shapes, which the file prints first: a loader a shape prints is not printed again.
  const expansions = expansionsView(r, file);
  // Only the operations the resource serves write, each with the body of its schema.
  const written = [...(serves(r, 'create') ? [r.schemas.in] : []), ...(serves(r, 'update') ? [r.schemas.update] : [])];
  const writes = written.map((s) => writesView(r, s, s === r.schemas.in, imports));
  const setters = new Set(written.flatMap((s) => s.fields.filter((f) => f.m2m).map((f) => f.m2m!.name)));
  const insertChecks = serves(r, 'create') && insertChecksReferences(r.schemas.in);
  const checkRelated = relatedCheckView(insertChecks ? written.filter((s) => s !== r.schemas.in) : written, imports);
  const insertReferences = insertChecks ? insertReferencesView(r.schemas.in, imports) : undefined;
  const relatedModels = new Set([...(checkRelated?.checks ?? []), ...(insertReferences?.references ?? [])].map((c) => c.model));
  const related = model.resources
    .filter((x) => relatedModels.has(modelConst(x.model)))
    .map((x) => ({ constName: modelConst(x.model), verboseKey: x.verboseKey, classKey: x.classKey }));
  if (setters.size) {
    imports.runtime('setRelated');
    imports.runtimeType('Db');
  }
  if (r.relations.length) imports.runtimeType('RelationSpec');
  if (r.softDelete) imports.runtimeType('SoftDeleteSpec');
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    table: r.table,
    pkColumn: r.pk.column,
    verboseKey: r.verboseKey,
    classKey: r.classKey,
    verboseName: r.verboseName,
    aVerboseName: aOrAn(r.verboseName),
    model: r.model,
    row: rowTypeName(r),
    columns: r.fields.map((f) => ({ column: f.column, type: columnType(f) })),
    record,
    recordColumns,
    related,
    shapes,
    expansions,
    writes,
    checkRelated,
    insertReferences,
    m2m: r.m2m.filter((m) => setters.has(m.name)).map((m) => ({ ...m, pascal: pascalCase(m.name) })),
    relations: relationsQueriesView(r, model).map((rel) => ({ ...rel, join: joinLoader(rel, file) })),
    softDelete: r.softDelete
      ? {
          column: r.softDelete.field.column,
          uniques: r.softDelete.uniques.map((u) => `{ fields: [${list(u.fields)}], columns: [${list(u.columns)}] }`),
        }
      : undefined,
    imports: imports.print(),
  };
}

/**
 * A many-to-many loader of the file that names the relation's join and related table: the relation
 * constant is that loader with the relation's label, not the join again.
 */
function joinLoader(rel: ReturnType<typeof relationsQueriesView>[number], file: QueriesFile): string | undefined {
  for (const [key, name] of file.loaderNames) {
    const l = JSON.parse(key) as Partial<Loader>;
    if (
      l.m2m &&
      l.joinTable === rel.joinTable &&
      l.ownColumn === rel.ownColumn &&
      l.otherColumn === rel.otherColumn &&
      l.table === rel.table &&
      l.pk === rel.pk
    )
      return name;
  }
  return undefined;
}

/** The name of a relation's constant in queries.ts (`TAGS_RELATION`). */
export const relationConst = (rel: Relation) => `${rel.relatedName.toUpperCase()}_RELATION`;

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
