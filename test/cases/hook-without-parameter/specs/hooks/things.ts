// opt takes nothing: the generated call passes the request context.
export function opt() {
  return {};
}

// Fine: one parameter, optional or not.
export async function stamp(ctx?: unknown) {
  return ctx;
}

// A decorator receives the view it wraps; this one asks for two.
export function logged(view: unknown, label: string) {
  return { view, label };
}

// Fine: a rest parameter takes any count.
export const archive = (...args: unknown[]) => args;
