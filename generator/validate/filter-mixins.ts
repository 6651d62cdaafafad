/**
 * The type filter mixins of the spec language (`filter_mixins`): the values each applies, the
 * parameter types it takes and the operator it compares with. Validation checks a viewset's query
 * parameters against them; the model compiles them into filter plans (model/build-filters.ts).
 */
import type { LookupOperator, TypeFilterMixin } from '@svcgen/runtime/catalogue';

/** The types of a query parameter (`query_params`). */
export type ParamType = 'str' | 'int' | 'float' | 'bool' | 'date' | 'datetime' | 'uuid' | 'decimal' | 'email' | 'url' | 'list' | 'dict';

export const TYPE_MIXINS = {
  IcontainsFilterViewSetMixin: { accepts: 'string', types: ['str', 'email'], op: 'icontains' },
  BooleanFilterViewSetMixin: { accepts: 'boolean', types: ['bool'], op: 'exact' },
  NumericFilterViewSetMixin: { accepts: 'number', types: ['int', 'float'], op: 'exact' },
  // The base of the four below: its operator is the viewset's `date_compare_attr` (exact by default).
  DateFilterViewSetMixin: { accepts: 'date', types: ['date', 'datetime'], op: 'exact' },
  GreaterDateFilterViewSetMixin: { accepts: 'date', types: ['date', 'datetime'], op: 'gt' },
  LessDateFilterViewSetMixin: { accepts: 'date', types: ['date', 'datetime'], op: 'lt' },
  GreaterEqualDateFilterViewSetMixin: { accepts: 'date', types: ['date', 'datetime'], op: 'gte' },
  LessEqualDateFilterViewSetMixin: { accepts: 'date', types: ['date', 'datetime'], op: 'lte' },
} as const satisfies Record<TypeFilterMixin, { accepts: string; types: readonly ParamType[]; op: LookupOperator }>;
