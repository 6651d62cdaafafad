// The runtime's path before it was its own package.
import type { HandledResponse, IntegrityError } from 'svcgen/runtime';

export function onIntegrity(_req: unknown, error: IntegrityError): HandledResponse {
  return { status: 409, body: error.body() };
}
