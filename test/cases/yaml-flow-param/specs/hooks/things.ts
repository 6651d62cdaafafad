export function summary(ctx: unknown) {
  return { ctx };
}
