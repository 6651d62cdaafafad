/**
 * The SQL text of a Knex-built query, built once per shape. A resource's reads (and inserts) are built with Knex
 * on every request (hooks narrow them, filters and orderings vary), but the requests of one route
 * mostly build the same query with other values: the same columns, conditions and ordering,
 * another key or search text. Their shape is the builder without those values; the SQL text is
 * the same for every query of a shape, and only the bindings change.
 *
 * `compiledQuery` reads the shape and the values off the builder. The first query of a shape is
 * compiled by Knex twice: once as it is (its SQL and bindings are the answer), and once with each
 * value replaced by a marker of its own. The shape is kept when the second compile gives the same
 * SQL text and bindings that are exactly the markers: that both proves that the values are the
 * bindings and nothing else, and tells their order. Later queries of the shape get that SQL text and
 * their own values in that order, without compiling. Conditions grouped by a callback are read by
 * running the callback on a new builder, as Knex does when it compiles (so the first query of a
 * shape runs it three times, later ones once). A query whose shape cannot be read (a subquery, named
 * raw bindings, a timeout…) or is not kept is compiled by Knex every time.
 */
import type { Knex } from 'knex';
import type { Database } from './database';
import {
  BOUND_WHERE_TYPES,
  builderInternals,
  isRaw,
  UNBOUND_JOIN_CLAUSES,
  type BuilderInternals as Builder,
  type KnexStatement as Statement,
} from './knex-internals';

/** What a query runs as: its SQL text with `?` placeholders and the values they bind, in order. */
export interface CompiledQuery {
  sql: string;
  bindings: readonly unknown[];
}

interface Shape {
  sql: string;
  /** For each placeholder, the index of its value among the values read off the builder. */
  order: number[];
}

/** Shapes kept; beyond this many (a filter with lists of every length, say), the oldest go first. */
export const SQL_SHAPES_KEPT = 1000;

/**
 * The longest shape kept, in characters of its names and SQL text (and one per part). A shape holds
 * names and SQL text from the code, never a request's values as long as they are bound where Knex
 * binds them; a value Knex binds somewhere this reader does not know of would make each query a
 * shape of its own (never kept: the marked compile binds it as it is), and this keeps such values,
 * however long, out of memory.
 */
const MAX_SHAPE_LENGTH = 4096;

/**
 * Shapes are kept in a tree whose edges are the parts of a shape, in the order the reader meets
 * them: a name, an operator, a flag, or a token that marks a bound value or where a group (a list,
 * a record, a statement…) begins and ends. A part is a key of a Map as it is, so reading a query's
 * shape walks the tree without building a string, and the number 1, the string "1" and a token stay
 * apart. Each group's end is marked, so a sequence of parts reads back one way only.
 *
 * Most nodes have one child (shapes share their beginnings and part where their queries differ):
 * a node's first child is also kept beside the Map, and a part equal (`===`) to its part leads
 * there without hashing the part. The Map holds every child, the first included, and answers any
 * other part (and NaN, the one value `===` does not find equal to itself, where the Map does).
 */
interface ShapeNode {
  readonly parent: ShapeNode | undefined;
  /** The part that leads here from `parent`. */
  readonly part: unknown;
  children: Map<unknown, ShapeNode> | undefined;
  /** One of the children (the first kept, while it is), undefined when it has none. */
  first: ShapeNode | undefined;
  /** Set when a shape ends here; null: compiled by Knex every time. */
  shape: Shape | null | undefined;
}

/** The shapes kept for one database (database.ts): their tree, and the nodes where they end, oldest first. */
export interface ShapeTable {
  readonly root: ShapeNode;
  readonly ends: Set<ShapeNode>;
}

const node = (parent: ShapeNode | undefined, part: unknown): ShapeNode => ({ parent, part, children: undefined, first: undefined, shape: undefined });

/** A database's table of shapes, empty. */
export function newShapeTable(): ShapeTable {
  return { root: node(undefined, undefined), ends: new Set() };
}

/** Parts that are not names or flags: a bound value, and where groups begin and end. */
const BOUND = Symbol('bound');
const RAW = Symbol('raw');
const ARRAY = Symbol('array');
const RECORD = Symbol('record');
const STATEMENT = Symbol('statement');
const JOIN = Symbol('join');
const WRAPPED = Symbol('wrapped');
const ROW = Symbol('row');
const LIST = Symbol('list');
const SINGLE = Symbol('single');
const END = Symbol('end');

/** A value a placeholder binds as it is: no SQL of its own. */
function isPlainValue(value: unknown): boolean {
  const type = typeof value;
  return value === null || type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint' || value instanceof Date;
}

/**
 * Reads a builder's shape and its values into `values`. Without marks, walks the shape tree from
 * `node` along the shape's parts (`found` once it ends on a kept shape); with `marks`, returns the
 * builder's statements and single fields with the values replaced by their marks. Undefined when
 * the shape cannot be read.
 */
class ShapeReader {
  readonly values: unknown[] = [];
  /** The shape's size (MAX_SHAPE_LENGTH). */
  length = 0;
  /** The parts read past the last node of the tree they lead to (`node`), when the tree has no further node. */
  unknown: unknown[] | undefined;

  constructor(
    private readonly client: Builder['client'],
    /**
     * Whether the database's client writes an integer LIMIT as text (each LIMIT then a shape of its
     * own), and a boolean value (each then a part of the shape).
     */
    private readonly asText: Pick<Database['dialect'], 'limitAsText' | 'booleansAsText'>,
    public node: ShapeNode | undefined,
    private readonly marks?: (index: number) => string,
  ) {}

  /** The next part of the shape: one step down the tree, or one more part the tree does not hold yet. */
  private part(part: unknown): void {
    this.length += typeof part === 'string' ? part.length + 1 : 1;
    if (this.unknown) this.unknown.push(part);
    else if (this.node) {
      const first = this.node.first;
      const next = first !== undefined && first.part === part ? first : this.node.children?.get(part);
      if (next) this.node = next;
      else this.unknown = [part];
    }
  }

  /**
   * A bound value: a part that stands for any value; with marks, its mark takes its place. A
   * boolean the client writes as text is a part of the shape, as it is.
   */
  private bound(value: unknown): unknown {
    if (typeof value === 'boolean' && this.asText.booleansAsText) {
      this.part(value);
      return value;
    }
    if (!isPlainValue(value)) throw NOT_A_SHAPE;
    const index = this.values.push(value) - 1;
    this.part(BOUND);
    return this.marks ? this.marks(index) : value;
  }

  /** A part of the SQL text (names, operators, flags), as it is. With marks, returns its marked copy. */
  fixed(value: unknown): unknown {
    if (value === undefined || (isPlainValue(value) && !(value instanceof Date))) {
      this.part(value);
      return value;
    }
    if (isRaw(value)) {
      const { sql, bindings } = value;
      this.part(RAW);
      this.part(sql);
      let marked: unknown[] | undefined;
      if (bindings !== undefined) {
        if (!Array.isArray(bindings)) throw NOT_A_SHAPE;
        marked = bindings.map((b) => this.bound(b));
      }
      this.part(END);
      return this.marks ? this.client.raw(sql, marked ?? []) : value;
    }
    if (Array.isArray(value)) {
      this.part(ARRAY);
      let out: unknown[] | undefined;
      if (this.marks) out = value.map((item) => this.fixed(item));
      else for (const item of value) this.fixed(item);
      this.part(END);
      return out;
    }
    if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      this.part(RECORD);
      const out: Record<string, unknown> | undefined = this.marks ? {} : undefined;
      const record = value as Record<string, unknown>;
      for (const k in record) {
        this.part(k);
        const v = this.fixed(record[k]);
        if (out) out[k] = v;
      }
      this.part(END);
      return out;
    }
    // A callback, a subquery, a Date or any other object: its SQL is not read here.
    throw NOT_A_SHAPE;
  }

  statement(s: Statement): Statement | undefined {
    if (s.grouping === 'join') return this.join(s);
    if (s.type === 'whereWrapped' && typeof s.value === 'function') return this.wrapped(s);
    const binds = (s.grouping === 'where' || s.grouping === 'having') && BOUND_WHERE_TYPES.has(s.type as string) && !s.asColumn;
    const out: Statement | undefined = this.marks ? {} : undefined;
    this.part(STATEMENT);
    for (const field in s) {
      const value = s[field];
      this.part(field);
      const copy =
        binds && field === 'value' && !isRaw(value) ? (Array.isArray(value) ? this.list(value) : this.bound(value)) : this.fixed(value);
      if (out) out[field] = copy;
    }
    this.part(END);
    return out;
  }

  /**
   * A join (Knex's JoinClause): its type, table and `on` clauses are all SQL text; a clause that
   * binds a value (`onVal`, `onIn`…) is not read. Its marked copy is itself: it holds no value.
   */
  private join(s: Statement): Statement {
    const clauses = s.clauses;
    if (!Array.isArray(clauses)) throw NOT_A_SHAPE;
    this.part(JOIN);
    this.fixed(s.joinType);
    this.fixed(s.table);
    this.fixed(s.schema);
    for (const clause of clauses as Statement[]) {
      if (!UNBOUND_JOIN_CLAUSES.has(clause.type as string)) throw NOT_A_SHAPE;
      this.fixed(clause);
    }
    this.part(END);
    return s;
  }

  /**
   * Conditions grouped by a callback (`where((q) => q.where(…).orWhere(…))`): the callback is run on
   * a new builder, as Knex runs it when compiling, and the conditions it adds are read as the
   * builder's own. Its marked copy is a callback that adds their marked copies.
   */
  private wrapped(s: Statement): Statement {
    const inner = this.client.queryBuilder();
    (s.value as (this: Builder, b: Builder) => void).call(inner, inner);
    if (Object.keys(inner._single).length > 0 || inner._statements.some((st) => st.grouping !== 'where')) throw NOT_A_SHAPE;
    this.part(WRAPPED);
    this.fixed(s.not);
    this.fixed(s.bool);
    const statements = inner._statements.map((st) => this.statement(st));
    this.part(END);
    return this.marks ? { ...s, value: (b: Builder) => void b._statements.push(...(statements as Statement[])) } : s;
  }

  /** A row to insert: its columns are the shape, their values bound (a raw value is SQL text). */
  private row(row: unknown): Record<string, unknown> | undefined {
    if (typeof row !== 'object' || row === null || Object.getPrototypeOf(row) !== Object.prototype) throw NOT_A_SHAPE;
    const out: Record<string, unknown> | undefined = this.marks ? {} : undefined;
    const record = row as Record<string, unknown>;
    this.part(ROW);
    for (const column in record) {
      const value = record[column];
      this.part(column);
      const copy = isRaw(value) || value === undefined ? this.fixed(value) : this.bound(value);
      if (out) out[column] = copy;
    }
    this.part(END);
    return out;
  }

  /** The values of `whereIn` or `whereBetween`: each is bound; their number belongs to the shape. */
  private list(values: unknown[]): unknown[] | undefined {
    this.part(LIST);
    let out: unknown[] | undefined;
    if (this.marks) out = values.map((v) => this.bound(v));
    else for (const v of values) this.bound(v);
    this.part(END);
    return out;
  }

  single(single: Record<string, unknown>): Record<string, unknown> | undefined {
    const out: Record<string, unknown> | undefined = this.marks ? {} : undefined;
    const skipBinding = single.skipBinding as Record<string, boolean> | undefined;
    this.part(SINGLE);
    for (const field in single) {
      const value = single[field];
      this.part(field);
      // LIMIT and OFFSET are placeholders, unless the builder was told to write them as text, or
      // the client writes a LIMIT as text (then each LIMIT is a shape of its own).
      const skip = skipBinding?.[field] || (field === 'limit' && this.asText.limitAsText);
      // Knex writes no OFFSET for 0 and no LIMIT for null: such a value is part of the shape.
      const bound = (field === 'limit' && value !== undefined && value !== null) || (field === 'offset' && !!value);
      let copy: unknown;
      if (field === 'insert') copy = Array.isArray(value) ? value.map((row) => this.row(row)) : this.row(value);
      else copy = bound && !skip ? this.bound(value) : this.fixed(value);
      if (out) out[field] = copy;
    }
    this.part(END);
    return out;
  }

  /** The part that ends the shape (the tree's node where its shape is kept). */
  end(): void {
    this.part(END);
  }
}

/** Thrown inside ShapeReader when a builder's shape cannot be read. */
const NOT_A_SHAPE = new Error('not a shape');

/**
 * Reads `builder` into `reader` (its shape and values); with a marking reader, also returns the
 * builder's single fields and statements with their values marked. Undefined when the shape cannot be read.
 */
function read(builder: Builder, reader: ShapeReader): { single?: Record<string, unknown>; statements: (Statement | undefined)[] } | undefined {
  if (builder._timeout || builder._connection !== undefined || builder._queryContext !== undefined || builder._debug) return undefined;
  if (builder._options?.length) return undefined;
  try {
    reader.fixed(builder._method ?? 'select');
    reader.fixed(builder._comments ?? []);
    const single = reader.single(builder._single);
    const statements = builder._statements.map((s) => reader.statement(s));
    reader.end();
    return { single, statements };
  } catch (err) {
    if (err === NOT_A_SHAPE) return undefined;
    throw err;
  }
}

const mark = (index: number) => `\u0000svcgen-binding-${index}\u0000`;

/** The shape of `builder` whose SQL was just compiled as `compiled`, or null when it is not to be kept. */
function learn(builder: Builder, asText: Pick<Database['dialect'], 'limitAsText' | 'booleansAsText'>, values: readonly unknown[], compiled: CompiledQuery): Shape | null {
  const reader = new ShapeReader(builder.client, asText, undefined, mark);
  const parts = read(builder, reader);
  if (!parts) return null;
  const marked = builder.clone();
  marked._single = parts.single as Record<string, unknown>;
  marked._statements = parts.statements as Statement[];
  const probe = marked.toSQL();
  if (probe.sql !== compiled.sql || probe.bindings.length !== compiled.bindings.length) return null;
  const order: number[] = [];
  for (let i = 0; i < probe.bindings.length; i++) {
    const m = /^\u0000svcgen-binding-(\d+)\u0000$/.exec(String(probe.bindings[i]));
    if (typeof probe.bindings[i] !== 'string' || !m) return null;
    const index = Number(m[1]);
    if (values[index] !== compiled.bindings[i]) return null;
    order.push(index);
  }
  return { sql: compiled.sql, order };
}

/** The SQL text and bindings of a query Knex built on `database`, from its shape when that is known (see above). */
export function compiledQuery(query: Knex.QueryBuilder, database: Pick<Database, 'shapes' | 'dialect'>): CompiledQuery {
  const builder = builderInternals(query);
  const table = database.shapes;
  const reader = new ShapeReader(builder.client, database.dialect, table.root);
  if (!read(builder, reader) || reader.length > MAX_SHAPE_LENGTH) return builder.toSQL();
  const { values, unknown } = reader;
  const found = unknown ? undefined : reader.node?.shape;
  if (found) return { sql: found.sql, bindings: found.order.map((i) => values[i]) };
  const compiled = builder.toSQL();
  if (found === undefined) keep(table, reader.node as ShapeNode, unknown ?? [], learn(builder, database.dialect, values, compiled));
  return compiled;
}

/** Keeps `shape` at the end of `parts` from `at`; beyond SQL_SHAPES_KEPT, the oldest shape goes first. */
function keep(table: ShapeTable, at: ShapeNode, parts: readonly unknown[], shape: Shape | null): void {
  let end = at;
  for (const part of parts) {
    const next = node(end, part);
    (end.children ??= new Map()).set(part, next);
    end.first ??= next;
    end = next;
  }
  end.shape = shape;
  table.ends.add(end);
  // Once the new shape is in: the nodes it shares with the oldest are kept for it.
  if (table.ends.size > SQL_SHAPES_KEPT) forget(table, table.ends.values().next().value as ShapeNode);
}

/** Drops the shape ending at `end`, and the nodes that led only to it. */
function forget(table: ShapeTable, end: ShapeNode): void {
  table.ends.delete(end);
  end.shape = undefined;
  for (let n = end; n.parent && n.shape === undefined && !n.children?.size; n = n.parent) {
    const parent = n.parent;
    parent.children?.delete(n.part);
    if (parent.first === n) parent.first = parent.children?.values().next().value;
  }
}
