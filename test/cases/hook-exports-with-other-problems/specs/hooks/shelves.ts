// Exports stamp; the resource names stamped too.
export async function stamp(ctx: unknown) {
  return ctx;
}
