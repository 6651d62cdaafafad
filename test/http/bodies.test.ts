/**
 * Request bodies the service cannot read, and over-long URLs: each is a 4xx in the seed's
 * `{"detail": ...}` shape, never a 500. Content codings that do not match the bytes (400), content
 * codings and media types the service does not read (415), bodies over the limit (413), URLs over
 * 8 KB (414), undecodable percent escapes (400); requests without a body behave as before.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import request from 'supertest';
import { BODY_ENCODINGS, bodyParserError } from '../../runtime/http/body';
import { MAX_URL_LENGTH } from '../../runtime/http/server';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle, insertWidget, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';
import { insertReturning } from '../../runtime/db/inserts';

const CANNOT_PARSE = { detail: 'Cannot parse request body' };

/** The service's application on a port of its own, for requests supertest does not send. */
async function serve(svc: RunningService): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(svc.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { port: (server.address() as AddressInfo).port, close };
}
const UNSUPPORTED = { detail: 'Unsupported Media Type' };

describe("express.json()'s errors", () => {
  it.each([
    ['entity.parse.failed', 400, 400, CANNOT_PARSE.detail, {}],
    ['entity.verify.failed', 403, 400, CANNOT_PARSE.detail, {}],
    ['request.aborted', 400, 400, CANNOT_PARSE.detail, {}],
    ['request.size.invalid', 400, 400, CANNOT_PARSE.detail, {}],
    ['entity.too.large', 413, 413, 'Payload Too Large', {}],
    ['charset.unsupported', 415, 415, 'Unsupported Media Type', {}],
    ['encoding.unsupported', 415, 415, 'Unsupported Media Type', { 'Accept-Encoding': BODY_ENCODINGS.join(', ') }],
  ])("%s (%d) is answered %d with the catalogue's body", (type, status, answered, detail, headers) => {
    const err = bodyParserError(Object.assign(new Error(type), { type, status }));
    expect(err && { status: err.status, detail: err.detail, headers: err.headers }).toEqual({ status: answered, detail, headers });
  });

  it('an error without a type, or not a 4xx, is not a body error', () => {
    expect(bodyParserError(Object.assign(new Error('x'), { status: 400 }))).toBeUndefined();
    expect(bodyParserError(Object.assign(new Error('x'), { type: 'entity.parse.failed', status: 500 }))).toBeUndefined();
  });
});

describe.each(DIALECTS)('request bodies on the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const raw = (body: string | Buffer, headers: Record<string, string>) => {
    let req = request(svc.app).post('/v/widgets/');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    // The bytes as given: superagent would otherwise serialize a Buffer as JSON.
    return req.serialize((data: unknown) => data as string).send(body);
  };
  const json = '{"name": "encoded"}';

  describe("JSON that parses but is not an object → 422 of the body's type, not 400", () => {
    it.each([['null'], ['"text"'], ['42'], ['true'], ['[]']])('%s on a create', async (text) => {
      const res = await raw(text, { 'Content-Type': 'application/json' });
      expect([res.status, res.body]).toEqual([
        422,
        {
          detail: [
            {
              type: 'model_attributes_type',
              loc: ['body', 'data'],
              msg: 'Input should be a valid dictionary or object to extract fields from',
            },
          ],
        },
      ]);
    });

    it('null on a PATCH is not an empty update', async () => {
      const id = await insertWidget(svc.database.db, { name: 'patched-null' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).set('Content-Type', 'application/json').send('null');
      expect([res.status, res.body]).toEqual([
        422,
        {
          detail: [
            {
              type: 'model_attributes_type',
              loc: ['body', 'data'],
              msg: 'Input should be a valid dictionary or object to extract fields from',
            },
          ],
        },
      ]);
    });
  });

  describe('Content-Encoding that does not match the bytes → 400 {"detail": "Cannot parse request body"}', () => {
    it.each([['gzip'], ['br'], ['deflate'], ['GZIP']])('%s on a body that is not compressed', async (encoding) => {
      const res = await raw(json, { 'Content-Type': 'application/json', 'Content-Encoding': encoding });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(CANNOT_PARSE);
    });

    it('a gzip body cut short', async () => {
      const res = await raw(zlib.gzipSync(Buffer.from(json)).subarray(0, 12), {
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(CANNOT_PARSE);
    });

    it('compressed JSON that is not valid JSON', async () => {
      const res = await raw(zlib.gzipSync(Buffer.from('{bad')), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(CANNOT_PARSE);
    });
  });

  it.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('a body really compressed with %s is read', async (encoding, compress) => {
    const res = await raw(compress(Buffer.from(`{"name": "compressed-${encoding}"}`)), {
      'Content-Type': 'application/json',
      'Content-Encoding': encoding,
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(`compressed-${encoding}`);
  });

  it.each([['compress'], ['x-unknown'], ['gzip, br']])('Content-Encoding %s → 415 with Accept-Encoding', async (encoding) => {
    const res = await raw(json, { 'Content-Type': 'application/json', 'Content-Encoding': encoding });
    expect(res.status).toBe(415);
    expect(res.body).toEqual(UNSUPPORTED);
    expect(res.headers['accept-encoding']).toBe(BODY_ENCODINGS.join(', '));
    expect(BODY_ENCODINGS).toEqual(expect.arrayContaining(['gzip', 'deflate', 'br']));
  });

  describe('a body whose media type is not JSON → 415 {"detail": "Unsupported Media Type"}', () => {
    it.each([
      ['application/x-www-form-urlencoded', 'name=form'],
      ['text/plain', '{"name": "text"}'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nmp\r\n--x--\r\n'],
      ['application/xml', '<name>x</name>'],
      ['application/json; charset=latin1', '{"name": "latin"}'],
      ['not a media type', '{"name": "garbled"}'],
    ])('POST with %s', async (type, body) => {
      const res = await raw(body, { 'Content-Type': type });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(UNSUPPORTED);
      expect(await svc.database.db('widgets').whereIn('name', ['form', 'text', 'mp', 'latin', 'garbled']).first()).toBeUndefined();
    });

    it('PATCH with text/plain', async () => {
      const id = await insertWidget(svc.database.db, { name: 'patched-as-text' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).set('Content-Type', 'text/plain').send('{"count": 3}');
      expect(res.status).toBe(415);
      expect(res.body).toEqual(UNSUPPORTED);
    });

    it('POST with form fields as superagent sends them', async () => {
      const res = await request(svc.app).post('/v/widgets/').type('form').send({ name: 'form-fields' });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(UNSUPPORTED);
    });
  });

  it('a +json media type and a utf-8 charset are read as JSON', async () => {
    const a = await raw('{"name": "vendor-json"}', { 'Content-Type': 'application/vnd.example+json' });
    expect(a.status).toBe(201);
    const b = await raw('{"name": "utf8-json"}', { 'Content-Type': 'application/json; charset=UTF-8' });
    expect(b.status).toBe(201);
  });

  it('no body at all, whatever the Content-Type, is still the 422 for the missing body', async () => {
    for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded']) {
      let req = request(svc.app).post('/v/widgets/');
      if (type) req = req.set('Content-Type', type);
      const res = await req;
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'data'], msg: 'Field required' }] });
    }
  });

  it('a body over 1 MB → 413 {"detail": "Payload Too Large"}', async () => {
    const res = await raw(JSON.stringify({ name: 'big', notes: 'x'.repeat(1024 * 1024) }), { 'Content-Type': 'application/json' });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Payload Too Large' });
  });

  it('malformed JSON keeps its answer', async () => {
    const res = await raw('{bad', { 'Content-Type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(CANNOT_PARSE);
  });

  it('plain JSON and the JSON the parser reads otherwise give the same answers: a byte order mark, blank text, a chunked body', async () => {
    // A plain JSON body (UTF-8, a length, no coding) is read without the parser; the others through it.
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name": "with-bom"}')]);
    for (const type of ['application/json', 'application/vnd.example+json']) {
      const read = await raw(bom, { 'Content-Type': type });
      expect([read.status, read.body.name]).toEqual([201, 'with-bom']);
      await svc.database.db('widgets').where({ id: read.body.id }).delete();
      const blank = await raw(' \n ', { 'Content-Type': type });
      expect([blank.status, blank.body]).toEqual([400, CANNOT_PARSE]);
    }
    const server = await serve(svc);
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: server.port, path: '/v/widgets/', method: 'POST', headers: { 'Content-Type': 'application/json' } },
        (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.write('{"name": ');
      req.end('"chunked"}');
    });
    await server.close();
    expect([chunked.status, JSON.parse(chunked.body).name]).toEqual([201, 'chunked']);
  });

  it('a client that stops sending in the middle of a plain JSON body leaves nothing behind, and the next request is served', async () => {
    const server = await serve(svc);
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /v/widgets/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": "cut');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.close();
    expect(await svc.database.db('widgets').where('name', 'like', 'cut%').first()).toBeUndefined();
    expect((await raw('{"name": "after-cut"}', { 'Content-Type': 'application/json' })).status).toBe(201);
  });

  describe('invalid UTF-8 in a JSON body → 400 {"detail": "Cannot parse request body"}, storing nothing', () => {
    // A widget name of the given bytes between `{"name": "` and `"}`.
    const named = (bytes: number[]) => Buffer.concat([Buffer.from('{"name": "bad8-'), Buffer.from(bytes), Buffer.from('"}')]);
    it.each([
      ['a lone continuation byte', [0x80]],
      ['a byte that never occurs (0xFF)', [0xff]],
      ['a Latin-1 "é"', [0xe9]],
      ['a sequence cut short', [0xe2, 0x82]],
      ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
      ["an overlong NUL (C0 80, Java's modified UTF-8)", [0xc0, 0x80]],
      ['an overlong three-byte "/" (E0 80 AF)', [0xe0, 0x80, 0xaf]],
      ['a lone high surrogate D800 encoded (CESU-8)', [0xed, 0xa0, 0x80]],
      ['a lone low surrogate DC00 encoded', [0xed, 0xb0, 0x80]],
      ['a surrogate pair encoded as two characters (CESU-8 "😀")', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
      ['a code point above U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
    ])('%s', async (_what, bytes) => {
      for (const type of ['application/json', 'application/json; charset=utf-8']) {
        const res = await raw(named(bytes), { 'Content-Type': type });
        expect([res.status, res.body]).toEqual([400, CANNOT_PARSE]);
      }
      expect(await svc.database.db('widgets').where('name', 'like', 'bad8-%').first()).toBeUndefined();
    });

    it('in a gzip body too', async () => {
      const res = await raw(zlib.gzipSync(named([0xed, 0xa0, 0x80])), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
      expect([res.status, res.body]).toEqual([400, CANNOT_PARSE]);
    });

    it('valid multi-byte text (2, 3 and 4 bytes, an escaped surrogate pair) is stored as sent', async () => {
      const res = await raw(Buffer.from('{"name": "ok-é€名😀\\ud83d\\ude00"}'), { 'Content-Type': 'application/json' });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('ok-é€名😀😀');
      expect((await svc.database.db('widgets').where({ id: res.body.id }).first('name')).name).toBe('ok-é€名😀😀');
    });
  });

  it('a body of another media type on GET or DELETE is ignored, as before', async () => {
    const id = await insertWidget(svc.database.db, { name: 'deleted-with-text' });
    const list = await request(svc.app).get('/v/widgets/').set('Content-Type', 'text/plain').send('ignored');
    expect(list.status).toBe(200);
    const del = await request(svc.app).delete(`/v/widgets/${id}/`).set('Content-Type', 'text/plain').send('ignored');
    expect(del.status).toBe(204);
  });

  it('a GET route reads no body: even malformed JSON on a list is not looked at', async () => {
    const list = await request(svc.app).get('/v/widgets/').set('Content-Type', 'application/json').send('{bad');
    expect(list.status).toBe(200);
  });

  describe('URLs', () => {
    it(`a request target over ${MAX_URL_LENGTH} bytes → 414 {"detail": "URI Too Long"}`, async () => {
      const res = await request(svc.app).get(`/v/widgets/?ordering=${'n'.repeat(MAX_URL_LENGTH)}`);
      expect(res.status).toBe(414);
      expect(res.body).toEqual({ detail: 'URI Too Long' });
    });

    it(`one of exactly ${MAX_URL_LENGTH} bytes is served`, async () => {
      const path = '/v/widgets/?ordering=name&x=';
      const res = await request(svc.app).get(path + 'y'.repeat(MAX_URL_LENGTH - path.length));
      expect(res.status).toBe(200);
    });

    it('a path parameter with a bad percent escape → 400 {"detail": "Bad Request"}', async () => {
      const res = await request(svc.app).get('/v/companies/%E0%A4%A/');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: 'Bad Request' });
    });
  });
});

describe.each(DIALECTS)('requests without a body on the blog (%s)', (dialect) => {
  let svc: RunningService;
  let staff: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    staff = await createUser(svc, { is_staff: true });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('an action POST with no body, with or without a Content-Type', async () => {
    for (const type of [undefined, 'text/plain']) {
      const id = await insertArticle(svc.database.db, { author_id: staff.id, is_published: false });
      let req = request(svc.app).post(`/api/articles/${id}/publish/`).set('Authorization', staff.bearer);
      if (type) req = req.set('Content-Type', type);
      const res = await req;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ published: true });
    }
  });

  it('a relation POST with a JSON body, and one with no body', async () => {
    const id = await insertArticle(svc.database.db, { author_id: staff.id });
    const [tag] = await insertReturning(svc.database.db, svc.database.db('tags').insert({ name: 'bodies' }), { name: 'bodies' }, ['id']);
    const tagId = Number(tag.id);
    const add = await request(svc.app)
      .post(`/api/articles/${id}/tags/`)
      .set('Authorization', staff.bearer)
      .send({ add: [tagId] });
    expect(add.status).toBe(200);
    expect(add.body.results.count).toBe(1);
    const empty = await request(svc.app).post(`/api/articles/${id}/tags/`).set('Authorization', staff.bearer);
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'data'], msg: 'Field required' }] });
  });

  it('a relation POST with a form body → 415', async () => {
    const id = await insertArticle(svc.database.db, { author_id: staff.id });
    const res = await request(svc.app).post(`/api/articles/${id}/tags/`).set('Authorization', staff.bearer).type('form').send({ add: '1' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual(UNSUPPORTED);
  });

  it('DELETE with no body', async () => {
    const id = await insertArticle(svc.database.db, { author_id: staff.id });
    const res = await request(svc.app).delete(`/api/articles/${id}/`).set('Authorization', staff.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Article deleted' });
  });
});
