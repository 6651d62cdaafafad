/**
 * The seed's "Standard responses" that the generated layer produces: exact status and whole body
 * for malformed JSON, validation (body, path, query), conflicts, custom exceptions, permission
 * errors raised from hooks, unhandled exceptions with and without SVC_DEBUG, and authentication.
 */
import request from 'supertest';
import { TokenService } from '../../runtime';
import { DIALECTS } from '../support/databases';
import { createUser, insertWidget, takeErrors, type TestUser } from '../support/fixtures';
import { otherKeys } from '../support/keys';
import { startBlog, startShowcase, type RunningService } from '../support/services';

/** A 409 that names what conflicts (SVC_NAMED_CONFLICTS, which the showcase turns on). */
const conflict = (details: string) => ({ error: 'conflict', details });
/** The error catalogue's 409: every service's answer to a broken constraint unless it names its conflicts. */
const CONFLICT = { error: 'conflict', details: 'The request violates a database constraint.' };
const UNAUTHORIZED = { detail: 'Unauthorized' };
const INTERNAL = { detail: 'Internal Server Error' };
const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';

/** A 422 body with one entry. */
function invalid(type: string, loc: (string | number)[], msg: string) {
  return { detail: [{ type, loc, msg }] };
}

describe.each(DIALECTS)('errors on the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const post = (body: unknown) =>
    request(svc.app)
      .post('/v/widgets/')
      .send(body as object);
  const rawPost = (text: string) => request(svc.app).post('/v/widgets/').set('Content-Type', 'application/json').send(text);

  describe('400: body that is not valid JSON', () => {
    it.each([['{bad'], ['{"name": }'], ['{"name": "x"} trailing'], ["{'name': 'x'}"]])(
      '%s → 400 {"detail": "Cannot parse request body"}',
      async (text) => {
        const res = await rawPost(text);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ detail: 'Cannot parse request body' });
      },
    );

    it('on PATCH too', async () => {
      const id = await insertWidget(svc.database.db, { name: 'parse-patch' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).set('Content-Type', 'application/json').send('{"count": 1');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: 'Cannot parse request body' });
    });
  });

  describe('422: the body does not match the schema (loc starts with body, data)', () => {
    it('a missing required field', async () => {
      const res = await post({ count: 1 });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('missing', ['body', 'data', 'name'], 'Field required'));
    });

    it('no body at all', async () => {
      const res = await request(svc.app).post('/v/widgets/');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('missing', ['body', 'data'], 'Field required'));
    });

    it('a JSON array instead of an object', async () => {
      const res = await rawPost('[1, 2]');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(
        invalid('model_attributes_type', ['body', 'data'], 'Input should be a valid dictionary or object to extract fields from'),
      );
    });

    it.each([
      ['a string for an int', { count: 'a' }, 'int_type', ['count'], 'Input should be a valid integer'],
      ['a fraction for an int', { count: 1.5 }, 'int_type', ['count'], 'Input should be a valid integer'],
      ['a number for a string', { name: 5 }, 'string_type', ['name'], 'Input should be a valid string'],
      [
        'a string longer than max_length',
        { name: 'x'.repeat(41) },
        'string_too_long',
        ['name'],
        'String should have at most 40 characters',
      ],
      ['a string for a bool', { active: 'yes' }, 'bool_type', ['active'], 'Input should be a valid boolean'],
      ['a string for a float', { ratio: 'big' }, 'float_type', ['ratio'], 'Input should be a valid number'],
      ['a bad email', { contact: 'not-an-email' }, 'value_error', ['contact'], 'value is not a valid email address'],
      ['a URL that is not http(s)', { homepage: 'javascript:alert(1)' }, 'url_parsing', ['homepage'], 'Input should be a valid URL'],
      ['a bad URL', { homepage: 'not a url' }, 'url_parsing', ['homepage'], 'Input should be a valid URL'],
      ['a bad uuid', { token: 'abc' }, 'uuid_parsing', ['token'], 'Input should be a valid UUID'],
      [
        'a bad date',
        { released_on: '2026-13-01' },
        'date_parsing',
        ['released_on'],
        'Input should be a valid date in the format YYYY-MM-DD',
      ],
      [
        'a date in another format',
        { released_on: '01/02/2026' },
        'date_parsing',
        ['released_on'],
        'Input should be a valid date in the format YYYY-MM-DD',
      ],
      [
        'a bad datetime',
        { checked_at: 'yesterday' },
        'datetime_parsing',
        ['checked_at'],
        'Input should be a valid datetime in ISO 8601 format',
      ],
      ['a value not in choices', { size: 'XL' }, 'enum', ['size'], 'Input should be "S" or "M" or "L"'],
      [
        'a decimal with too many places',
        { price: '1.234' },
        'decimal_max_places',
        ['price'],
        'Decimal input should have no more than 2 decimal places',
      ],
      [
        'a decimal with too many digits',
        { price: '1234567' },
        'decimal_whole_digits',
        ['price'],
        'Decimal input should have no more than 6 digits before the decimal point',
      ],
      ['a decimal that is not a number', { price: 'ten' }, 'decimal_parsing', ['price'], 'Input should be a valid decimal'],
      ['a number for a foreign key string', { maker: 5 }, 'string_type', ['maker'], 'Input should be a valid string'],
      ['a string for a list', { labels: 'red' }, 'list_type', ['labels'], 'Input should be a valid list'],
      ['a bad uuid in a list', { labels: ['nope'] }, 'uuid_parsing', ['labels', 0], 'Input should be a valid UUID'],
    ])('%s', async (_what, fields, type, loc, msg) => {
      const res = await post({ name: 'typed', ...fields });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid(type as string, ['body', 'data', ...(loc as (string | number)[])], msg as string));
    });

    it('reports every invalid field, in schema order', async () => {
      const res = await post({ name: 'x'.repeat(41), count: 'a', price: '1.234', contact: 'nope', homepage: 'javascript:x' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'string_too_long', loc: ['body', 'data', 'name'], msg: 'String should have at most 40 characters' },
          { type: 'int_type', loc: ['body', 'data', 'count'], msg: 'Input should be a valid integer' },
          { type: 'decimal_max_places', loc: ['body', 'data', 'price'], msg: 'Decimal input should have no more than 2 decimal places' },
          { type: 'value_error', loc: ['body', 'data', 'contact'], msg: 'value is not a valid email address' },
          { type: 'url_parsing', loc: ['body', 'data', 'homepage'], msg: 'Input should be a valid URL' },
        ],
      });
    });

    it('validates update bodies the same way', async () => {
      const id = await insertWidget(svc.database.db, { name: 'validated-update' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).send({ count: 'many' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('int_type', ['body', 'data', 'count'], 'Input should be a valid integer'));
    });
  });

  describe('422, never 500: huge numbers', () => {
    it.each([
      ['count', '1e400', 'int_type', 'Input should be a valid integer'],
      ['count', '-1e400', 'int_type', 'Input should be a valid integer'],
      ['count', '9223372036854775808', 'less_than_equal', 'Input should be less than or equal to 2147483647'],
      ['count', '-9223372036854775808', 'greater_than_equal', 'Input should be greater than or equal to -2147483648'],
      ['count', '2147483648', 'less_than_equal', 'Input should be less than or equal to 2147483647'],
      ['serial', '9223372036854775808', 'less_than_equal', 'Input should be less than or equal to 9007199254740991'],
      ['serial', '1e400', 'int_type', 'Input should be a valid integer'],
      ['ratio', '1e400', 'float_type', 'Input should be a valid number'],
      ['price', '1e400', 'float_type', 'Input should be a valid number'],
      ['price', `"${'9'.repeat(400)}"`, 'decimal_whole_digits', 'Decimal input should have no more than 6 digits before the decimal point'],
    ])('%s: %s', async (field, literal, type, msg) => {
      const res = await rawPost(`{"name": "huge", "${field}": ${literal}}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid(type, ['body', 'data', field], msg));
    });

    it('a huge founded year on a maker', async () => {
      const res = await request(svc.app)
        .post('/v/companies/')
        .set('Content-Type', 'application/json')
        .send('{"code": "big", "title": "Big", "founded": 1e400}');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('int_type', ['body', 'data', 'founded'], 'Input should be a valid integer'));
    });

    it.each([['1e400'], ['99999999999999999999'], ['9223372036854775808']])('path key %s → 422 int_parsing', async (pk) => {
      const res = await request(svc.app).get(`/v/widgets/${pk}/`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('int_parsing', ['path', 'pk'], INT_PARSING));
    });

    it('a path key beyond the column range → 422 at ["path","pk"]', async () => {
      const res = await request(svc.app).get('/v/widgets/2147483648/');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('less_than_equal', ['path', 'pk'], 'Input should be less than or equal to 2147483647'));
    });

    it.each([
      ['limit', '1e400'],
      ['offset', '99999999999999999999'],
      ['limit', '9223372036854775808'],
    ])('query %s=%s → 422 int_parsing', async (name, value) => {
      const res = await request(svc.app).get(`/v/widgets/?${name}=${value}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('int_parsing', ['query', name], INT_PARSING));
    });

    it('a huge but valid offset is an empty page, not an error', async () => {
      const res = await request(svc.app).get('/v/widgets/?offset=9007199254740991');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [], count: expect.any(Number) });
    });
  });

  describe('422: path and query (loc starts with path or query)', () => {
    it('a query value of the wrong type', async () => {
      const res = await request(svc.app).get('/v/widgets/?limit=abc');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('int_parsing', ['query', 'limit'], INT_PARSING));
    });

    it('a string key too long for its column', async () => {
      const res = await request(svc.app).get(`/v/companies/${'x'.repeat(21)}/`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid('string_too_long', ['path', 'pk'], 'String should have at most 20 characters'));
    });
  });

  describe('unknown fields', () => {
    it('are ignored, not an error, and never written', async () => {
      const res = await post({ name: 'extra-fields', bogus: 1, id: 424242, created_at: '1999-01-01T00:00:00Z', notes: 'kept' });
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('bogus');
      expect(res.body.id).not.toBe(424242);
      expect(res.body.created_at).not.toBe('1999-01-01T00:00:00.000Z');
      const detail = await request(svc.app).get(`/v/widgets/${res.body.id}/`);
      expect(detail.body.notes).toBe('kept');
    });
  });

  describe('409: a database constraint fails', () => {
    it('a duplicate unique value on create', async () => {
      expect((await post({ name: 'unique-one' })).status).toBe(201);
      const res = await post({ name: 'unique-one' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(conflict('A widget with this name already exists.'));
    });

    it('a duplicate unique value on update', async () => {
      await insertWidget(svc.database.db, { name: 'taken' });
      const id = await insertWidget(svc.database.db, { name: 'renamed-later' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).send({ name: 'taken' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(conflict('A widget with this name already exists.'));
      expect((await svc.database.db('widgets').where({ id }).first()).name).toBe('renamed-later');
    });

    it('a duplicate string primary key', async () => {
      expect((await request(svc.app).post('/v/companies/').send({ code: 'dup', title: 'First' })).status).toBe(201);
      const res = await request(svc.app).post('/v/companies/').send({ code: 'dup', title: 'Second' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(conflict('A maker with this code already exists.'));
    });

    it('deleting a maker a widget references (on_delete protect)', async () => {
      expect((await request(svc.app).post('/v/companies/').send({ code: 'protected', title: 'P' })).status).toBe(201);
      expect((await post({ name: 'protector', maker: 'protected' })).status).toBe(201);
      const res = await request(svc.app).delete('/v/companies/protected/');
      expect(res.status).toBe(409);
      expect(res.body).toEqual(conflict('Cannot delete this maker: it is still the maker of some widgets.'));
      expect((await request(svc.app).get('/v/companies/protected/')).status).toBe(200);
    });

    it('deleting a maker a crate references names the crates, not the widgets (SQLite does not say which key)', async () => {
      expect((await request(svc.app).post('/v/companies/').send({ code: 'crated', title: 'C' })).status).toBe(201);
      await svc.database.db('crates').insert({ code: 'C-409', quantity: 1, maker_id: 'crated' });
      const res = await request(svc.app).delete('/v/companies/crated/');
      expect([res.status, res.body]).toEqual([409, conflict('Cannot delete this maker: it is still the maker of some crates.')]);
      expect((await request(svc.app).get('/v/companies/crated/')).status).toBe(200);
      await svc.database.db('crates').where({ code: 'C-409' }).delete();
      expect((await request(svc.app).delete('/v/companies/crated/')).status).toBe(204);
    });

    it('a duplicate of a value two fields hold is named by the field whose constraint failed', async () => {
      expect((await post({ name: 'first-of-two' })).status).toBe(201);
      const res = await post({ name: 'first-of-two', maker: null });
      expect([res.status, res.body]).toEqual([409, conflict('A widget with this name already exists.')]);
    });
  });

  describe('custom exceptions and hooks', () => {
    it('a custom exception class with a registered handler → 418 {"teapot": true, "code": "teapot"}', async () => {
      const res = await post({ name: 'teapot' });
      expect(res.status).toBe(418);
      expect(res.body).toEqual({ teapot: true, code: 'teapot' });
      const id = await insertWidget(svc.database.db, { name: 'kettle' });
      const upd = await request(svc.app).patch(`/v/widgets/${id}/`).send({ name: 'teapot' });
      expect(upd.status).toBe(418);
      expect(upd.body).toEqual({ teapot: true, code: 'teapot' });
    });

    it('ForbiddenError from an after_create hook → 403', async () => {
      const res = await post({ name: 'forbidden-widget' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', details: 'Widgets named forbid* are not allowed' });
    });

    it('ForbiddenError from an after_update hook → 403', async () => {
      const id = await insertWidget(svc.database.db, { name: 'allowed' });
      const res = await request(svc.app).patch(`/v/widgets/${id}/`).send({ name: 'forbid-me' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', details: 'Widgets named forbid* are not allowed' });
    });

    it('ForbiddenError from a before_delete hook → 403 and the widget stays', async () => {
      const created = await post({ name: 'locked' });
      expect(created.status).toBe(201);
      const res = await request(svc.app).delete(`/v/widgets/${created.body.id}/`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', details: 'This widget is locked' });
      expect((await request(svc.app).get(`/v/widgets/${created.body.id}/`)).status).toBe(200);
    });
  });

  describe('500: an unhandled exception', () => {
    it('answers JSON {"detail": "Internal Server Error"} without a stack trace', async () => {
      const res = await post({ name: 'explode' });
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(INTERNAL);
      expect(res.text).not.toContain('exploded');
      expect(res.text).not.toMatch(/\bat\s/);
      expect(takeErrors(svc)).toEqual(['Error: exploded after the write']);
    });
  });
});

describe.each(DIALECTS)("409s by default: the catalogue's body, whatever the constraint (%s)", (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    // The showcase names its conflicts in its service file; the environment turns the setting off.
    svc = await startShowcase(dialect, { SVC_NAMED_CONFLICTS: false });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('a duplicate unique value', async () => {
    expect((await request(svc.app).post('/v/widgets/').send({ name: 'default-dup' })).status).toBe(201);
    const res = await request(svc.app).post('/v/widgets/').send({ name: 'default-dup' });
    expect([res.status, res.body]).toEqual([409, CONFLICT]);
  });

  it('a duplicate string primary key', async () => {
    expect((await request(svc.app).post('/v/companies/').send({ code: 'dflt', title: 'D' })).status).toBe(201);
    const res = await request(svc.app).post('/v/companies/').send({ code: 'dflt', title: 'E' });
    expect([res.status, res.body]).toEqual([409, CONFLICT]);
  });

  it('a protected delete, on every database (SQLite too, which does not say which key)', async () => {
    expect((await request(svc.app).post('/v/companies/').send({ code: 'dflt-protect', title: 'P' })).status).toBe(201);
    expect((await request(svc.app).post('/v/widgets/').send({ name: 'dflt-protector', maker: 'dflt-protect' })).status).toBe(201);
    const res = await request(svc.app).delete('/v/companies/dflt-protect/');
    expect([res.status, res.body]).toEqual([409, CONFLICT]);
    expect((await request(svc.app).get('/v/companies/dflt-protect/')).status).toBe(200);
  });
});

describe.each(DIALECTS)('errors with SVC_DEBUG true (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect, { SVC_DEBUG: true });
  });
  afterAll(() => svc.close());

  it('answers a 500 with the traceback as plain text', async () => {
    const res = await request(svc.app).post('/v/widgets/').send({ name: 'explode' });
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^Error: exploded after the write\n\s+at /);
    expect(res.text).toContain('widgets');
    expect(takeErrors(svc)).toEqual(['Error: exploded after the write']);
  });

  it('still answers handled errors as JSON', async () => {
    const res = await request(svc.app).post('/v/widgets/').send({ name: 'teapot' });
    expect(res.status).toBe(418);
    expect(res.body).toEqual({ teapot: true, code: 'teapot' });
    expect(takeErrors(svc)).toEqual([]);
  });
});

describe.each(DIALECTS)('authentication errors on the blog (%s)', (dialect) => {
  let svc: RunningService;
  let staff: TestUser;
  let member: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    staff = await createUser(svc, { is_staff: true });
    member = await createUser(svc);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const badHeaders: [string, string | undefined][] = [
    ['no Authorization header', undefined],
    ['a garbage bearer token', 'Bearer garbage'],
    ['an empty bearer token', 'Bearer '],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
  ];

  it.each(badHeaders)('401 {"detail": "Unauthorized"} on a protected endpoint with %s', async (_what, header) => {
    let req = request(svc.app).get('/api/users/');
    if (header !== undefined) req = req.set('Authorization', header);
    const res = await req;
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('401 on a protected write without a token, and nothing is written', async () => {
    const res = await request(svc.app).post('/api/categories/').send({ name: 'Anonymous' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
    expect(await svc.database.db('categories').where({ name: 'Anonymous' }).first()).toBeUndefined();
  });

  it('401 for a token signed with a key the service does not trust', async () => {
    const forged = await new TokenService(otherKeys(), svc.settings).issueAccess(staff.id);
    const res = await request(svc.app).get('/api/users/').set('Authorization', `Bearer ${forged}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('401 for a refresh token used as an access token', async () => {
    const refresh = await svc.context.tokens.issueRefresh(staff.id);
    const res = await request(svc.app).get('/api/users/').set('Authorization', `Bearer ${refresh}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('401 for an inactive user and for a user that no longer exists', async () => {
    const inactive = await createUser(svc, { is_active: false });
    const a = await request(svc.app).get('/api/users/').set('Authorization', inactive.bearer);
    expect(a.status).toBe(401);
    expect(a.body).toEqual(UNAUTHORIZED);
    const ghost = await createUser(svc);
    await svc.database.db('users').where({ id: ghost.id }).delete();
    const b = await request(svc.app).get('/api/users/').set('Authorization', ghost.bearer);
    expect(b.status).toBe(401);
    expect(b.body).toEqual(UNAUTHORIZED);
  });

  it('401 on a public endpoint when an invalid token is sent; 200 without one or with a valid one', async () => {
    const bad = await request(svc.app).get('/api/categories/').set('Authorization', 'Bearer garbage');
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual(UNAUTHORIZED);
    const none = await request(svc.app).get('/api/categories/');
    expect(none.status).toBe(200);
    const good = await request(svc.app).get('/api/categories/').set('Authorization', member.bearer);
    expect(good.status).toBe(200);
  });

  it('200 for a valid token on a JWTAuth endpoint', async () => {
    const res = await request(svc.app).get(`/api/users/${member.id}/`).set('Authorization', member.bearer);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: member.id,
      username: member.username,
      email: `${member.username}@example.com`,
      first_name: '',
      last_name: '',
      bio: '',
      avatar: '',
    });
  });

  it('403 for a non-staff user on AdminAuth endpoints', async () => {
    const forbidden = { error: 'forbidden', details: 'Staff privileges required' };
    const create = await request(svc.app).post('/api/categories/').set('Authorization', member.bearer).send({ name: 'Members only' });
    expect(create.status).toBe(403);
    expect(create.body).toEqual(forbidden);
    expect(await svc.database.db('categories').where({ name: 'Members only' }).first()).toBeUndefined();

    const tag = await request(svc.app).post('/api/tags/').set('Authorization', staff.bearer).send({ name: 'staff-made' });
    expect(tag.status).toBe(201);
    const patch = await request(svc.app).patch(`/api/tags/${tag.body.id}/`).set('Authorization', member.bearer).send({ name: 'hijacked' });
    expect(patch.status).toBe(403);
    expect(patch.body).toEqual(forbidden);
    const del = await request(svc.app).delete(`/api/tags/${tag.body.id}/`).set('Authorization', member.bearer);
    expect(del.status).toBe(403);
    expect(del.body).toEqual(forbidden);
    const users = await request(svc.app)
      .post('/api/users/')
      .set('Authorization', member.bearer)
      .send({ username: 'x', email: 'x@example.com', password: 'pw' });
    expect(users.status).toBe(403);
    expect(users.body).toEqual(forbidden);
  });

  it('409 for a duplicate category name', async () => {
    const first = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Twice' });
    expect(first.status).toBe(201);
    const second = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Twice' });
    expect(second.status).toBe(409);
    expect(second.body).toEqual(CONFLICT);
  });

  it('422 for a category name longer than its maximum', async () => {
    const res = await request(svc.app)
      .post('/api/categories/')
      .set('Authorization', staff.bearer)
      .send({ name: 'n'.repeat(101) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(invalid('string_too_long', ['body', 'data', 'name'], 'String should have at most 100 characters'));
  });

  it('422 for page=0 on a list', async () => {
    const res = await request(svc.app).get('/api/tags/?page=0');
    expect(res.status).toBe(422);
    expect(res.body).toEqual(invalid('greater_than_equal', ['query', 'page'], 'Input should be greater than or equal to 1'));
  });
});
