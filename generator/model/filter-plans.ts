/**
 * The model's filter plans: lookups compiled into tables, columns, relation hops and an operator, the
 * filter parameters of a list and the mixins that apply them. The IR's types only, so that the model
 * (model.ts) and the compiler (build-filters.ts) both import them and not each other.
 */
import type { FilterMixinName, ListItemType, LookupOperator, TypeFilterMixin } from '@svcgen/runtime/catalogue';
import type { ParamType } from '../validate/filter-mixins';

export type { ParamType };

/** How a column compares and binds (runtime/query/filters.ts `ColumnKind`). */
export type ColumnKind = 'text' | 'int' | 'bigint' | 'float' | 'decimal' | 'bool' | 'date' | 'datetime' | 'uuid' | 'json' | 'list';

/** `from IN (SELECT select FROM table [JOIN join.table ON join.on])`; see runtime/query/filters.ts `Hop`. */
export interface HopPlan {
  from: string;
  nullable: boolean;
  table: string;
  select: string;
  join?: { table: string; on: [string, string] };
  many: boolean;
}

export interface LookupPlan {
  hops: HopPlan[];
  column: string;
  kind: ColumnKind;
  /** A `list` column: the type of its items. */
  items?: ListItemType;
  nullable: boolean;
  op: LookupOperator;
}

export type ConditionPlan =
  { and: ConditionPlan[] } | { or: ConditionPlan[] } | { not: ConditionPlan } | { lookup: LookupPlan; value: unknown };

export interface CasePlan {
  condition: ConditionPlan;
  include: boolean;
  /** The spec's query_filter, for documentation. */
  source: unknown;
}

export type TypeMixinName = TypeFilterMixin;
export type MixinName = FilterMixinName;

/** A mixin that applies one lookup per parameter (the type mixins and RelationFilterViewSetMixin). */
export interface LookupMixinPlan {
  name: TypeMixinName | 'RelationFilterViewSetMixin';
  kind: 'lookups';
  /** Values the mixin applies; others are ignored (runtime `MixinAccepts`). */
  accepts: 'string' | 'boolean' | 'number' | 'date' | 'any';
  lookups: { param: string; lookup: LookupPlan; source: string }[];
}

export interface MatchCaseMixinPlan {
  name: 'MatchCaseFilterViewSetMixin';
  kind: 'cases';
  cases: { param: string; true: CasePlan; false: CasePlan }[];
}

export type MixinPlan = LookupMixinPlan | MatchCaseMixinPlan;

/** A filter query parameter of the list. */
export interface FilterParam {
  name: string;
  type: ParamType;
  /** `in`: a comma-separated list of values; `range`: two of them; else one value. */
  shape?: 'in' | 'range';
  /** An int parameter compared with a 32-bit integer column: its values must fit that column. */
  bounds?: 'int32';
  /** The validated value used when the parameter is absent; null: not applied. */
  default: unknown;
  description?: string;
  from: 'query_params' | 'relations_filters' | 'filters_match_cases';
}

export interface ResourceFilters {
  /** Every filter parameter: query_params, then relations_filters, then filters_match_cases, each in spec order. */
  params: FilterParam[];
  /** Mixins in the order they apply (filter_mixins order). */
  mixins: MixinPlan[];
  /** The query_params_handler hook replacing the generated application. */
  handler?: string;
}
