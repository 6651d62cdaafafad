/**
 * The error middleware's headers: every 401 carries a `WWW-Authenticate` challenge, whoever raised
 * it (custom code, an exception handler), and a 429 carries `Retry-After`.
 */
import express from 'express';
import request from 'supertest';
import { AuthError, HttpError, TooManyRequestsError, unauthorized, type Settings } from '../../runtime';
import { errorMiddleware } from '../../runtime/http/error-middleware';

const settings = { SVC_DEBUG: false } as Settings;

function app(throwing: (req: express.Request) => unknown, handlers: Parameters<typeof errorMiddleware>[1] = []) {
  const a = express();
  a.get('/x', (req) => {
    throw throwing(req);
  });
  a.use(errorMiddleware(settings, handlers, () => undefined));
  return a;
}

describe('the error middleware', () => {
  it('adds WWW-Authenticate: Bearer to a 401 custom code raises', async () => {
    for (const error of [new AuthError({ detail: 'Nope' }), new HttpError(401, 'Nope')]) {
      const res = await request(app(() => error)).get('/x');
      expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, { detail: 'Nope' }, 'Bearer']);
    }
  });

  it('adds it to a 401 an exception handler answers', async () => {
    const res = await request(
      app(() => new HttpError(418, 'teapot'), [[HttpError, () => ({ status: 401, body: { detail: 'Handled' } })]]),
    ).get('/x');
    expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, { detail: 'Handled' }, 'Bearer']);
  });

  it('keeps the challenge authentication set', async () => {
    const res = await request(
      app((req) => unauthorized(req, { detail: 'Unauthorized' }, { error: 'invalid_token', description: 'Expired' })),
    ).get('/x');
    expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer error="invalid_token", error_description="Expired"']);
  });

  it('sets no challenge on other statuses', async () => {
    const res = await request(app(() => new HttpError(403, 'No'))).get('/x');
    expect([res.status, res.headers['www-authenticate']]).toEqual([403, undefined]);
  });

  it('answers TooManyRequestsError with 429 and its Retry-After', async () => {
    const res = await request(app(() => new TooManyRequestsError(30))).get('/x');
    expect([res.status, res.body, res.headers['retry-after']]).toEqual([429, { detail: 'Too Many Requests' }, '30']);
  });
});
