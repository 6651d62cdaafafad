/**
 * Errors as answers: what a driver or custom code throws, made into the runtime's exceptions, and the
 * exception handlers a service registers (`exception_handlers` in the service spec), looked up by the
 * error's class. The HTTP error middleware renders with them; so does a part of a request that
 * answers on its own (an item of a bulk request).
 */
import type { Request } from 'express';
import { ZodError } from 'zod';
import { ApiException, ServiceUnavailableError, ValidationError } from '../core/errors';
import { isConnectionFailure, isConstraintViolation } from '../db/driver-errors';
import { toEntries } from '../validation/validate';
import { integrityError } from './conflicts';
import type { Conflicts, ExceptionHandler, ExceptionHandlers, HandledResponse } from './types';

export type { ExceptionClass, ExceptionHandler, ExceptionHandlers, HandledResponse } from './types';

/**
 * Driver constraint errors become IntegrityError (naming what conflicts when `conflicts`, the
 * service's, knows the constraint), connection failures ServiceUnavailableError; a ZodError thrown
 * by custom code becomes the 400 validation body.
 */
export function normalizeError(err: unknown, conflicts?: Conflicts): unknown {
  if (err instanceof ApiException) return err;
  if (isConstraintViolation(err)) return integrityError(err, conflicts);
  if (isConnectionFailure(err)) return new ServiceUnavailableError(err);
  if (err instanceof ZodError) return new ValidationError(toEntries(err.issues, []));
  return err;
}

/** The handler of the most specific registered class of `err`, walking its prototype chain from its own class. */
export function findHandler(err: unknown, handlers: ExceptionHandlers): ExceptionHandler | undefined {
  if (!err || typeof err !== 'object') return undefined;
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const entry = handlers.find(([cls]) => cls.prototype === proto);
    if (entry) return entry[1];
  }
  return undefined;
}

/**
 * What the error middleware would answer for `error` met while serving `req`, for a part of a
 * request that answers on its own (an item of a bulk request): the registered exception handler's
 * response, else an ApiException's status and body (a driver's constraint error is the 409).
 * Undefined for the errors that fail the whole request: an unavailable database and unhandled errors.
 */
export async function handledError(
  handlers: ExceptionHandlers,
  req: Request,
  error: unknown,
  conflicts?: Conflicts,
): Promise<HandledResponse | undefined> {
  const err = normalizeError(error, conflicts);
  if (err instanceof ServiceUnavailableError) return undefined;
  const handler = findHandler(err, handlers);
  if (handler) return handler(req, err);
  return err instanceof ApiException ? { status: err.status_code, body: err.body() } : undefined;
}
