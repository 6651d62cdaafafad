/**
 * The error catalogue: the exceptions user code may raise and the bodies they render to.
 * One Express error middleware (`errorMiddleware`, http/error-middleware.ts) turns each into a response.
 */
import type { BuiltinException } from './catalogue';

export type ErrorBody = Record<string, unknown>;

/**
 * Base of every raisable exception (the default behaviours' BaseException).
 * Subclasses set `static status_code`, optionally `static code` and a class-level default `static error`.
 *
 * Body rules: a string `error` becomes `{"error": "<string>"}`, an object `error` is returned as it is,
 * and `details`, when given, is added under `"details"`.
 */
export class ApiException extends Error {
  static status_code = 400;
  static code: string | undefined = undefined;
  static error: string | ErrorBody | undefined = undefined;

  readonly error: string | ErrorBody;
  readonly status_code: number;
  readonly code: string | undefined;
  readonly details: unknown;

  constructor(error?: string | ErrorBody, statusCode?: number | null, details?: unknown) {
    const cls = new.target as typeof ApiException;
    const value = error ?? cls.error ?? 'error';
    super(typeof value === 'string' ? value : JSON.stringify(value));
    this.name = cls.name;
    this.error = value;
    this.status_code = statusCode ?? cls.status_code;
    this.code = cls.code;
    this.details = details;
  }

  /** The JSON body of the response. */
  body(): ErrorBody {
    const base: ErrorBody = typeof this.error === 'string' ? { error: this.error } : { ...this.error };
    if (this.details !== undefined && this.details !== null) base.details = this.details;
    return base;
  }
}

/** The seed names the base class BaseException; it is exported under that name too. */
export { ApiException as BaseException };

/** A payload that cannot be serialized or saved (400). */
export class SerializeError extends ApiException {
  static override status_code = 400;
}

/** An authentication failure (401). */
export class AuthError extends ApiException {
  static override status_code = 401;
}

/** A permission check that failed (403): `{"error": "forbidden", "details": "<text>"}`. */
export class ForbiddenError extends ApiException {
  static override status_code = 403;
  static override error = 'forbidden';
  constructor(error?: string | ErrorBody | null, details?: unknown) {
    super(error ?? undefined, 403, details);
  }
}

/** What the runtime knows of a model to name it in an error body. */
export interface ModelRef {
  /** The 404 key: verbose name with underscores, or the class name in snake case (see settings). */
  readonly notFoundKey: string;
}

/** A missing object (404): `{"<model_key>": "not found"}`. */
export class NotFoundError extends ApiException {
  static override status_code = 404;
  constructor(model: ModelRef | string, details?: unknown) {
    super({ [typeof model === 'string' ? model : model.notFoundKey]: 'not found' }, 404, details);
  }
}

/** A single-object lookup that matched several rows (400). */
export class MultipleObjectsError extends ApiException {
  static override status_code = 400;
  constructor(model: ModelRef | string) {
    super({ [typeof model === 'string' ? model : model.notFoundKey]: 'multiple objects match the lookup' }, 400);
  }
}

/** A generic HTTP error: `{"detail": "<message>"}` with the given status. */
export class HttpError extends ApiException {
  constructor(
    status: number,
    readonly detail: string,
  ) {
    super({ detail }, status);
  }
}

/** A validation entry in the error catalogue's shape. */
export interface ValidationEntry {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** A request that does not match its schema (422): `{"detail": [{type, loc, msg}, ...]}`. */
export class RequestValidationError extends ApiException {
  static override status_code = 422;
  constructor(readonly entries: ValidationEntry[]) {
    super({ detail: entries }, 422);
  }
}

/**
 * Validation failing inside custom code (400):
 * `{"error": "Validation Error", "details": [{type, loc, msg}, ...]}`.
 */
export class ValidationError extends ApiException {
  static override status_code = 400;
  constructor(readonly entries: ValidationEntry[]) {
    super('Validation Error', 400, entries);
  }
}

/** The details of a 409 whose constraint the service cannot name. */
export const CONFLICT_DETAILS = 'The request violates a database constraint.';

/**
 * A database constraint that failed (409): `{"error": "conflict", "details": "..."}`, the details
 * naming the fields or the relation when the service knows the constraint (operations/conflicts.ts).
 * Raised by the runtime for driver errors; handlers may be registered for it.
 */
export class IntegrityError extends ApiException {
  static override status_code = 409;
  constructor(
    override readonly cause: unknown,
    details: string = CONFLICT_DETAILS,
  ) {
    super('conflict', 409, details);
  }
}

/**
 * A conditional write whose `If-Match` names no current version of the row (412):
 * `{"error": "precondition_failed", "details": "..."}`. The row changed since the client read it.
 */
export class PreconditionFailedError extends ApiException {
  static override status_code = 412;
  constructor(details = 'The object has changed since it was read: If-Match names none of its current versions.') {
    super('precondition_failed', 412, details);
  }
}

/**
 * A write to a resource that requires `If-Match` sent without one (428):
 * `{"error": "precondition_required", "details": "..."}`.
 */
export class PreconditionRequiredError extends ApiException {
  static override status_code = 428;
  constructor(details = 'This request must be conditional: send If-Match with the ETag of the version it changes.') {
    super('precondition_required', 428, details);
  }
}

/** The `Retry-After` of a 503, in seconds. */
export const RETRY_AFTER_SECONDS = 5;

/** The database cannot be reached (503). Raised by the runtime for driver connection errors; handlers may be registered for it. */
export class ServiceUnavailableError extends ApiException {
  static override status_code = 503;
  readonly retryAfter = RETRY_AFTER_SECONDS;
  constructor(override readonly cause?: unknown) {
    super({ detail: 'Service Unavailable' }, 503);
  }
}

/**
 * Too many requests (429): `{"detail": "<message>"}` with `Retry-After`, the seconds until the
 * client may try again (the login throttle raises it; custom code may too).
 */
export class TooManyRequestsError extends HttpError {
  constructor(
    /** Seconds until a request may be counted again: the `Retry-After` of the response. */
    readonly retryAfter: number,
    detail = 'Too Many Requests',
  ) {
    super(429, detail);
  }
}

/** The exception classes `exception_handlers` may name, by name (the catalogue's list, checked here). */
export const BUILTIN_EXCEPTION_CLASSES = {
  ApiException,
  BaseException: ApiException,
  SerializeError,
  AuthError,
  ForbiddenError,
  NotFoundError,
  MultipleObjectsError,
  HttpError,
  RequestValidationError,
  ValidationError,
  IntegrityError,
  ServiceUnavailableError,
  TooManyRequestsError,
} satisfies Record<BuiltinException, abstract new (...args: never[]) => ApiException>;
