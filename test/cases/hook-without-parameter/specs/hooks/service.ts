// Fine: a views hook may ignore the router it receives.
export function registerViews(): void {}

// An exception handler receives the request and the error; this one asks for three.
export const onIntegrity = (req: unknown, error: unknown, extra: string) => ({ status: 409, body: { req, error, extra } });
