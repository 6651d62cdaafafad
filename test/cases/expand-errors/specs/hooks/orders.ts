export function ownOrders({ query }: { query: unknown }) {
  return query;
}
