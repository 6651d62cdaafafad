/**
 * SQLite: the database file deleted or replaced while the service runs. The connections it holds
 * would go on writing to the unlinked file (every row lost at the next start) or keep the old file
 * while another sits at the path; instead readiness and every write answer 503
 * `{"detail": "Service Unavailable"}` with `Retry-After`, the outage is logged once, and the service
 * serves again when the same file is back at its path.
 */
import * as fs from 'node:fs';
import request from 'supertest';
import { RETRY_AFTER_SECONDS } from '../../runtime/core/errors';
import { createUser, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, type RunningService } from '../support/services';

const UNAVAILABLE = { detail: 'Service Unavailable' };

describe('a SQLite database file deleted or replaced while serving', () => {
  let svc: RunningService;
  let staff: TestUser;
  let file: string;
  beforeEach(async () => {
    svc = await startBlog('sqlite');
    staff = await createUser(svc, { is_staff: true });
    file = svc.database.url.slice('sqlite:'.length);
  });
  afterEach(() => svc.close());

  const ready = () => request(svc.app).get('/api/health/ready');
  const create = (name: string) => request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name });
  const unavailable = (res: request.Response) => ({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body });
  const UNAVAILABLE_503 = { status: 503, retryAfter: String(RETRY_AFTER_SECONDS), body: UNAVAILABLE };

  it('deleted: readiness and a create are 503 with Retry-After, nothing is written, the outage is logged once', async () => {
    expect((await ready()).status).toBe(200);
    expect((await create('Before')).status).toBe(201);
    fs.unlinkSync(file);
    expect(unavailable(await ready())).toEqual(UNAVAILABLE_503);
    expect(unavailable(await create('Lost'))).toEqual(UNAVAILABLE_503);
    expect(unavailable(await create('Lost too'))).toEqual(UNAVAILABLE_503);
    expect(unavailable(await ready())).toEqual(UNAVAILABLE_503);
    // Reads fail too from then on: what they would show is gone at the next start.
    expect(unavailable(await request(svc.app).get('/api/categories/'))).toEqual(UNAVAILABLE_503);
    const logged = takeErrors(svc);
    expect(logged).toEqual([
      `database outage: SQLITE_CANTOPEN: the database file ${file} was deleted since the service opened it; restart the service once the file is back, in select 1; answering 503 Service Unavailable until the database answers again`,
    ]);
    // No new empty database was made at the path.
    expect(fs.existsSync(file)).toBe(false);
  });

  it('replaced by another file: readiness and a create are 503; neither file gets the row', async () => {
    expect((await create('Before')).status).toBe(201);
    // A copy of the database (as a restore from a backup would put there), renamed over the path.
    fs.copyFileSync(file, `${file}.copy`);
    fs.renameSync(`${file}.copy`, file);
    expect(unavailable(await ready())).toEqual(UNAVAILABLE_503);
    expect(unavailable(await create('Elsewhere'))).toEqual(UNAVAILABLE_503);
    const logged = takeErrors(svc);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(
      /^database outage: SQLITE_CANTOPEN: the database file .+ was replaced by another file since the service opened it; restart the service once the file is back, in select 1;/,
    );
    // The file now at the path has what was copied, and not the refused row.
    const Database = require('better-sqlite3');
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.prepare('select name from categories').pluck().all()).toEqual(['Before']);
    } finally {
      copy.close();
    }
  });

  it('the same file back at its path (renamed away and back): the service serves again, the end of the outage is logged', async () => {
    fs.renameSync(file, `${file}.away`);
    expect(unavailable(await create('Away'))).toEqual(UNAVAILABLE_503);
    fs.renameSync(`${file}.away`, file);
    expect((await ready()).status).toBe(200);
    const res = await create('Back');
    expect(res.status).toBe(201);
    const logged = takeErrors(svc);
    expect(logged).toHaveLength(2);
    expect(logged[1]).toMatch(/^database outage over after \d+\.\d s; 1 request was answered 503$/);
    expect(await svc.database.db('categories').pluck('name')).toEqual(['Back']);
  });
});
