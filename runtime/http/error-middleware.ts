/**
 * The one error middleware: every failure of a request, whoever threw it, is rendered here in the
 * error catalogue's shape (a registered exception handler's answer, an ApiException's status and body, or a
 * 500 that shows its stack only with SVC_DEBUG).
 */
import type { ErrorRequestHandler, Request } from 'express';
import { ApiException, ServiceUnavailableError, TooManyRequestsError } from '../core/errors';
import type { Settings } from '../core/settings';
import type { OutageMonitor } from '../db/outage';
import { findHandler, normalizeError, type ExceptionHandlers } from '../operations/exceptions';
import type { Conflicts } from '../operations/conflicts';
import { bodyParserError } from './body';
import { sendJson } from './send';

/** A URL Express cannot decode (a bad percent escape in a path parameter) is the client's fault. */
function isUndecodableUrl(err: unknown): boolean {
  const { name, status } = (err ?? {}) as { name?: unknown; status?: unknown };
  return name === 'URIError' && status === 400;
}

export function errorMiddleware(
  settings: Settings,
  handlers: ExceptionHandlers,
  logError: (error: unknown, req?: Request) => void,
  outage?: OutageMonitor,
  conflicts?: Conflicts,
): ErrorRequestHandler {
  return async (rawErr, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const body = bodyParserError(rawErr);
    if (body) {
      res.set(body.headers);
      sendJson(res, body.status, { detail: body.detail });
      return;
    }
    if (isUndecodableUrl(rawErr)) {
      sendJson(res, 400, { detail: 'Bad Request' });
      return;
    }
    const err = normalizeError(rawErr, conflicts);
    if (err instanceof ServiceUnavailableError && err.cause !== undefined) outage?.failed(err.cause, req);
    // The one place a 503 or 429 gets its Retry-After, whoever answers it (an exception handler too).
    if (err instanceof ServiceUnavailableError || err instanceof TooManyRequestsError) res.set('Retry-After', String(err.retryAfter));
    try {
      const handler = findHandler(err, handlers);
      if (handler) {
        const out = await handler(req, err);
        send(out.status, out.body);
        return;
      }
    } catch (handlerError) {
      return renderUnhandled(handlerError);
    }
    if (err instanceof ApiException) {
      send(err.status_code, err.body());
      return;
    }
    renderUnhandled(err);

    /** Every 401 carries a challenge (RFC 6750): the one authentication set, else a plain `Bearer`. */
    function send(status: number, body: unknown) {
      if (status === 401 && !res.get('WWW-Authenticate')) res.set('WWW-Authenticate', 'Bearer');
      sendJson(res, status, body);
    }

    function renderUnhandled(error: unknown) {
      logError(error, req);
      if (settings.SVC_DEBUG) {
        res
          .status(500)
          .type('text/plain')
          .send(error instanceof Error ? (error.stack ?? String(error)) : String(error));
      } else {
        sendJson(res, 500, { detail: 'Internal Server Error' });
      }
    }
  };
}
