export function narrowProducts(ctx: unknown) {
  return ctx;
}

export function restock(ctx: unknown) {
  return ctx;
}
