/**
 * Security headers on every kind of answer (SVC_SECURITY_HEADERS), who may read the docs
 * (SVC_DOCS), and a request with two `Authorization` headers (a 400).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ConfigurationError } from '../../runtime';
import { corsSettings } from '../../runtime/http/cors';
import {
  API_CSP,
  docsPagePolicy,
  httpSecuritySettings,
  SECURITY_HEADERS,
  securityHeaders,
  SWAGGER_UI_SCRIPT_STYLES,
} from '../../runtime/http/security-headers';
import { NOT_FOUND, STAFF_REQUIRED, UNAUTHORIZED } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle } from '../support/fixtures';
import { startBlog, type RunningService } from '../support/services';

const SECURITY = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};
const API_HEADERS = { ...SECURITY, 'content-security-policy': API_CSP };
const SECURITY_NAMES = [...Object.keys(SECURITY), 'content-security-policy'];

function securityHeadersOf(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => SECURITY_NAMES.includes(name)));
}

describe('SVC_SECURITY_HEADERS, SVC_DOCS and SVC_PUBLIC_URL', () => {
  it('default to headers on and the docs public', () => {
    expect(httpSecuritySettings({})).toEqual({ headers: true, docs: 'public' });
    expect(httpSecuritySettings({ SVC_SECURITY_HEADERS: 'off', SVC_DOCS: ' Staff ' })).toEqual({ headers: false, docs: 'staff' });
  });

  it('SVC_PUBLIC_URL: an http or https URL, kept without its trailing slash', () => {
    expect(httpSecuritySettings({ SVC_PUBLIC_URL: 'https://api.example.com/' })).toEqual({
      headers: true,
      docs: 'public',
      publicUrl: 'https://api.example.com',
    });
    expect(httpSecuritySettings({ SVC_PUBLIC_URL: ' http://example.com:8080/svc// ' }).publicUrl).toBe('http://example.com:8080/svc');
  });

  it.each([
    [{ SVC_SECURITY_HEADERS: 'maybe' }, 'SVC_SECURITY_HEADERS must be true or false, got "maybe"'],
    [{ SVC_DOCS: 'private' }, 'SVC_DOCS must be one of public, off, staff, got "private"'],
    [{ SVC_PUBLIC_URL: 'api.example.com' }, 'SVC_PUBLIC_URL must be an http or https URL, got "api.example.com"'],
    [
      { SVC_PUBLIC_URL: 'ftp://api.example.com' },
      'SVC_PUBLIC_URL must be an http or https URL without query, fragment or credentials, got "ftp://api.example.com"',
    ],
    [
      { SVC_PUBLIC_URL: 'https://api.example.com/?x=1' },
      'SVC_PUBLIC_URL must be an http or https URL without query, fragment or credentials, got "https://api.example.com/?x=1"',
    ],
  ])('refuse %j', (env, message) => {
    expect(() => httpSecuritySettings(env)).toThrow(new ConfigurationError(message));
  });

  it('the middleware sets SECURITY_HEADERS and the CSP, with headers set before it or none; each response its own (an appended value stays on its response)', async () => {
    expect(SECURITY_HEADERS).toEqual(SECURITY);
    const middleware = securityHeaders();
    const server = http.createServer((req, res) => {
      if (req.url === '/after') res.setHeader('X-First', '1');
      middleware(req as never, res as never, () => {
        if (req.url === '/append') res.appendHeader('X-Frame-Options', 'SAMEORIGIN');
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const headersOf = async (path: string) => Object.fromEntries((await fetch(`http://127.0.0.1:${port}${path}`)).headers);
      const appended = await headersOf('/append');
      expect(securityHeadersOf(appended)).toEqual({ ...API_HEADERS, 'x-frame-options': 'DENY, SAMEORIGIN' });
      expect(securityHeadersOf(await headersOf('/'))).toEqual(API_HEADERS);
      const after = await headersOf('/after');
      expect([after['x-first'], securityHeadersOf(after)]).toEqual(['1', API_HEADERS]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("the docs page's policy allows its inline styles by hash, scripts from its origin only", () => {
    const policy = docsPagePolicy('<style>a{}</style><svg style="x:1"></svg>');
    // The hashes as `openssl dgst -sha256 -binary | base64` gives them (the logo's as Chromium reports it).
    expect(policy).toBe(
      "default-src 'none'; script-src 'self'; " +
        "style-src 'self' 'sha256-X1RutGBrXCt9KkSaXMK7tHftWiRscFHOhxsS8tv8hBk=' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; " +
        "style-src-attr 'unsafe-hashes' 'sha256-C3iAeJN8TG7W+YtkG3qRKc6dbMmT8QALuAJOettIwoA='; " +
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it("Swagger UI's scripts still add the styles the policy allows", () => {
    const preset = fs.readFileSync(require.resolve('swagger-ui-dist/swagger-ui-standalone-preset.js'), 'utf8');
    for (const style of SWAGGER_UI_SCRIPT_STYLES) expect(preset).toContain(JSON.stringify(style));
  });
});

describe.each(DIALECTS)('security headers (%s)', (dialect) => {
  describe('by default', () => {
    let svc: RunningService;
    let articleId: number;
    let bearer: string;
    beforeAll(async () => {
      svc = await startBlog(
        dialect,
        {},
        { security: httpSecuritySettings({}), cors: corsSettings({ SVC_CORS_ORIGINS: 'https://app.example.com' }) },
      );
      const user = await createUser(svc);
      bearer = user.bearer;
      articleId = await insertArticle(svc.database.db, { author_id: user.id });
    });
    afterAll(() => svc.close());

    it.each([
      ['a list', () => ['/api/articles/', 200]],
      ['a retrieve', () => [`/api/articles/${articleId}/`, 200]],
      ['a 404', () => ['/api/articles/999999/', 404]],
      ['a 404 off the routes', () => ['/nowhere', 404]],
      ['a 401', () => ['/api/auth/me/', 401]],
      ['a 422', () => ['/api/articles/abc/', 422]],
      ['the liveness probe', () => ['/api/health', 200]],
      ['the OpenAPI document', () => ['/api/openapi.json', 200]],
    ] as [string, () => [string, number]][])('%s carries them, with the API policy', async (_what, target) => {
      const [path, status] = target();
      const res = await request(svc.app).get(path);
      expect(res.status).toBe(status);
      expect(securityHeadersOf(res.headers)).toEqual(API_HEADERS);
    });

    it('an authenticated request and a create carry them', async () => {
      const me = await request(svc.app).get('/api/auth/me/').set('Authorization', bearer);
      expect(me.status).toBe(200);
      expect(securityHeadersOf(me.headers)).toEqual(API_HEADERS);
      const invalid = await request(svc.app).post('/api/articles/').set('Authorization', bearer).send({});
      expect(invalid.status).toBe(422);
      expect(securityHeadersOf(invalid.headers)).toEqual(API_HEADERS);
    });

    it('the Swagger UI page carries them, with its own policy', async () => {
      const res = await request(svc.app).get('/api/docs/');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const { 'content-security-policy': policy, ...rest } = securityHeadersOf(res.headers);
      expect(rest).toEqual(SECURITY);
      expect(policy).toMatch(
        /^default-src 'none'; script-src 'self'; style-src 'self'( 'sha256-[A-Za-z0-9+/]{43}='){3}; style-src-attr 'unsafe-hashes' 'sha256-[A-Za-z0-9+/]{43}='; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
      );
      expect(policy).toBe(docsPagePolicy(res.text));
      const script = await request(svc.app).get('/api/docs/swagger-ui-init.js');
      expect(script.status).toBe(200);
      expect(script.headers['x-content-type-options']).toBe('nosniff');
    });

    it('beside the CORS headers: a preflight and a cross-origin read', async () => {
      const preflight = await request(svc.app)
        .options('/api/articles/')
        .set('Origin', 'https://app.example.com')
        .set('Access-Control-Request-Method', 'GET');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
      const read = await request(svc.app).get('/api/articles/').set('Origin', 'https://app.example.com');
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(securityHeadersOf(read.headers)).toEqual(API_HEADERS);
    });
  });

  describe('SVC_SECURITY_HEADERS=false', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(dialect, {}, { security: httpSecuritySettings({ SVC_SECURITY_HEADERS: 'false' }) });
    });
    afterAll(() => svc.close());

    it.each(['/api/articles/', '/api/docs/', '/api/openapi.json', '/api/auth/me/'])('%s carries none', async (path) => {
      const res = await request(svc.app).get(path);
      expect(securityHeadersOf(res.headers)).toEqual({});
    });
  });
});

describe.each(DIALECTS)('SVC_DOCS (%s)', (dialect) => {
  describe('off', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(dialect, {}, { security: httpSecuritySettings({ SVC_DOCS: 'off' }) });
    });
    afterAll(() => svc.close());

    it.each(['/api/openapi.json', '/api/docs', '/api/docs/', '/api/docs/swagger-ui-init.js', '/api/docs/swagger-ui.css'])(
      '%s → 404 {"detail": "Not Found"}',
      async (path) => {
        const res = await request(svc.app).get(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      },
    );

    it('the API still serves', async () => {
      expect((await request(svc.app).get('/api/articles/')).status).toBe(200);
    });
  });

  describe('staff', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(dialect, {}, { security: httpSecuritySettings({ SVC_DOCS: 'staff' }) });
    });
    afterAll(() => svc.close());

    it('the document without a token → 401 with a challenge', async () => {
      const res = await request(svc.app).get('/api/openapi.json');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('with a token that is not valid → 401', async () => {
      const res = await request(svc.app).get('/api/openapi.json').set('Authorization', 'Bearer not-a-token');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('with the token of a user who is not staff → 403', async () => {
      const user = await createUser(svc);
      const res = await request(svc.app).get('/api/openapi.json').set('Authorization', user.bearer);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(STAFF_REQUIRED);
    });

    it('with a staff token → 200, the document', async () => {
      const staff = await createUser(svc, { is_staff: true });
      const res = await request(svc.app).get('/api/openapi.json').set('Authorization', staff.bearer);
      expect(res.status).toBe(200);
      expect(res.body.info).toMatchObject({ title: 'Blog API', version: '1.0.0' });
      expect(securityHeadersOf(res.headers)).toEqual(API_HEADERS);
    });

    it('the Swagger UI page, which cannot send a token, is not served', async () => {
      for (const path of ['/api/docs', '/api/docs/']) {
        const res = await request(svc.app).get(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });
  });
});

describe.each(DIALECTS)('two Authorization headers (%s)', (dialect) => {
  let svc: RunningService;
  let bearer: string;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    bearer = (await createUser(svc)).bearer;
  });
  afterAll(() => svc.close());

  it.each([
    ['a public route', 'get', '/api/articles/'],
    ['a protected route', 'get', '/api/auth/me/'],
    ['a write', 'post', '/api/articles/'],
  ] as const)('on %s → 400 {"detail": "Bad Request"}, whichever comes first', async (_what, method, path) => {
    for (const pair of [
      [bearer, 'Bearer other'],
      ['Bearer other', bearer],
      [bearer, bearer],
    ]) {
      // An array is sent as one header line per value.
      const res = await request(svc.app)
        [method](path)
        .set('Authorization', pair as unknown as string);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: 'Bad Request' });
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_request"');
    }
    expect(await svc.database.db('articles').count({ n: '*' })).toEqual([{ n: expect.anything() }]);
  });

  it('one Authorization header is served as before', async () => {
    const res = await request(svc.app).get('/api/auth/me/').set('Authorization', bearer);
    expect(res.status).toBe(200);
  });
});
