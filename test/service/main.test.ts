/**
 * The compiled blog entry point, as `npm start`, `npm run migrate` and `npm run createuser` run it:
 * migrate, createuser (its flags, the hashed password, taken names), production without keys, and
 * key files that are not a usable pair.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import knex from 'knex';
import request from 'supertest';
import { connect, loadSettings } from '../../runtime';
import { testKeys } from '../support/keys';

const root = path.resolve(__dirname, '../..');
const main = path.join(root, 'dist/generated/main.js');

jest.setTimeout(180_000);

function run(args: string[], env: Record<string, string>, timeout?: number) {
  return spawnSync(process.execPath, [main, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', timeout });
}

describe('generated main', () => {
  let dir: string;
  let url: string;

  beforeAll(() => {
    const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(build.stdout + build.stderr).toBe('');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-main-'));
    url = `sqlite:${path.join(dir, 'blog.sqlite3')}`;
  });

  it('migrates, then reports the database up to date', () => {
    const first = run(['migrate'], { DATABASE_URL: url });
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^applied migrations: 0001_initial/);
    const second = run(['migrate'], { DATABASE_URL: url });
    expect(second.stdout.trim()).toBe('database is up to date');
  });

  it('creates users with roles, prints only the id, hashes the password and refuses taken names', async () => {
    const staff = run(
      ['createuser', '--username', 'root', '--email', 'root@example.com', '--password', 's3cret', '--staff', '--superuser'],
      { DATABASE_URL: url },
    );
    expect(staff.status).toBe(0);
    expect(staff.stdout).toBe('1\n');
    const inactive = run(['createuser', '--username', 'ghost', '--email', 'ghost@example.com', '--password', 'pw', '--inactive'], {
      DATABASE_URL: url,
    });
    expect(inactive.stdout).toBe('2\n');
    const taken = run(['createuser', '--username', 'root', '--email', 'other@example.com', '--password', 'pw'], { DATABASE_URL: url });
    expect(taken.status).toBe(1);
    expect(taken.stderr).toContain('createuser: username "root" is already taken');
    const email = run(['createuser', '--username', 'other', '--email', 'root@example.com', '--password', 'pw'], { DATABASE_URL: url });
    expect(email.status).toBe(1);
    expect(email.stderr).toContain('createuser: email "root@example.com" is already registered');
    for (const [username, msg] of [
      ['bad name!', 'String should contain only letters, digits and @ . + - _ characters'],
      ["o'brien", 'String should contain only letters, digits and @ . + - _ characters'],
    ]) {
      const refused = run(['createuser', '--username', username, '--email', 'bad@example.com', '--password', 'pw'], { DATABASE_URL: url });
      expect([refused.status, refused.stdout, refused.stderr.trim().split('\n').pop()]).toEqual([
        1,
        '',
        `createuser: username "${username}" is not allowed: ${msg}`,
      ]);
    }
    const unicode = run(['createuser', '--username', 'zoë.o+1@x', '--email', 'zoe@example.com', '--password', 'pw'], { DATABASE_URL: url });
    expect([unicode.status, unicode.stdout]).toEqual([0, '3\n']);
    // Usernames in their NFKC form, as registration stores them: a fullwidth "ｒｏｏｔ" is "root".
    const lookalike = run(['createuser', '--username', 'ｒｏｏｔ', '--email', 'wide@example.com', '--password', 'pw'], {
      DATABASE_URL: url,
    });
    expect([lookalike.status, lookalike.stdout, lookalike.stderr.trim().split('\n').pop()]).toEqual([
      1,
      '',
      'createuser: username "root" is already taken',
    ]);
    const wide = run(['createuser', '--username', 'ｗｉｄｅ①', '--email', 'wide@example.com', '--password', 'pw'], { DATABASE_URL: url });
    expect([wide.status, wide.stdout]).toEqual([0, '4\n']);
    const lengthened = run(['createuser', '--username', '㎒'.repeat(51), '--email', 'mhz@example.com', '--password', 'pw'], {
      DATABASE_URL: url,
    });
    expect([lengthened.status, lengthened.stderr.trim().split('\n').pop()]).toEqual([
      1,
      `createuser: username "${'MHz'.repeat(51)}" is not allowed: String should have at most 150 characters`,
    ]);
    const missing = run(['createuser', '--username', 'x'], { DATABASE_URL: url });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--email is required');

    const db = knex({ client: 'better-sqlite3', connection: { filename: path.join(dir, 'blog.sqlite3') }, useNullAsDefault: true });
    const rows = await db('users').select('username', 'password', 'is_active', 'is_staff', 'is_superuser').orderBy('id');
    await db.destroy();
    expect(rows.map((r) => ({ ...r, password: /^\$2b\$/.test(r.password) }))).toEqual([
      { username: 'root', password: true, is_active: 1, is_staff: 1, is_superuser: 1 },
      { username: 'ghost', password: true, is_active: 0, is_staff: 0, is_superuser: 0 },
      { username: 'zoë.o+1@x', password: true, is_active: 1, is_staff: 0, is_superuser: 0 },
      { username: 'wide1', password: true, is_active: 1, is_staff: 0, is_superuser: 0 },
    ]);
  });

  it('createuser --superuser makes a staff user too, as Django does, whom AdminAuth routes serve', async () => {
    const made = run(['createuser', '--username', 'boss', '--email', 'boss@example.com', '--password', 'correct horse', '--superuser'], {
      DATABASE_URL: url,
    });
    expect([made.status, made.stdout]).toEqual([0, '5\n']);
    const db = connect(url, 'unused.sqlite3');
    try {
      const row = await db('users').where({ username: 'boss' }).first('is_active', 'is_staff', 'is_superuser');
      expect(row).toEqual({ is_active: 1, is_staff: 1, is_superuser: 1 });
      // The blog's categories are written behind AdminAuth: access.md says 2xx for a superuser.
      const { app, context } = require('../../generated/app').createService({
        db,
        keys: testKeys(),
        settings: loadSettings(require('../../generated/settings').DEFAULT_SETTINGS, {}, {}),
      });
      const token = `Bearer ${await context.tokens.issueAccess(5)}`;
      const created = await request(app)
        .post('/api/categories/')
        .set('Authorization', token)
        .send({ name: 'Staff picks', description: 'Chosen by the boss' });
      expect({ status: created.status, body: created.body }).toEqual({
        status: 201,
        body: { id: created.body.id, name: 'Staff picks', description: 'Chosen by the boss' },
      });
      const users = await request(app).get('/api/users/5/').set('Authorization', token);
      expect(users.status).toBe(200);
    } finally {
      await db.destroy();
    }
  });

  it('refuses to serve in production without keys, before touching the database', () => {
    const fresh = `sqlite:${path.join(dir, 'untouched', 'blog.sqlite3')}`;
    const res = run([], {
      DATABASE_URL: fresh,
      NODE_ENV: 'production',
      SVC_JWT_PRIVATE_KEY_FILE: '',
      SVC_JWT_PUBLIC_KEY_FILE: '',
      PORT: '0',
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('configuration error: NODE_ENV is production but no JWT keys are configured');
    expect(fs.existsSync(path.join(dir, 'untouched'))).toBe(false);
  });

  describe('refuses to serve with broken key files: one line "configuration error: …", exit 1, the database untouched', () => {
    const pairs = () => {
      const keysDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-main-keys-'));
      const write = (name: string, text: string) => {
        fs.writeFileSync(path.join(keysDir, name), text);
        return path.join(keysDir, name);
      };
      const a = crypto.generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
      const b = crypto.generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
      return {
        privateA: write('a-private.pem', a.privateKey),
        publicA: write('a-public.pem', a.publicKey),
        publicB: write('b-public.pem', b.publicKey),
        notPem: write('not-pem.pem', 'this is not a key\n'),
        missing: path.join(keysDir, 'missing.pem'),
        keysDir,
      };
    };
    let keys: ReturnType<typeof pairs>;
    beforeAll(() => {
      keys = pairs();
    });

    it.each([
      [
        'the public key given as the private key',
        () => [keys.publicA, keys.publicA],
        /^configuration error: SVC_JWT_PRIVATE_KEY_FILE \(.*a-public\.pem\) is not a PEM private key \(it holds a public key\): .+$/,
      ],
      [
        'keys of two different pairs',
        () => [keys.privateA, keys.publicB],
        /^configuration error: SVC_JWT_PRIVATE_KEY_FILE \(.*a-private\.pem\) and SVC_JWT_PUBLIC_KEY_FILE \(.*b-public\.pem\) are not a pair: a probe signed with the private key does not verify with the public key$/,
      ],
      [
        'a public key file that is not PEM',
        () => [keys.privateA, keys.notPem],
        /^configuration error: SVC_JWT_PUBLIC_KEY_FILE \(.*not-pem\.pem\) is not a PEM public key: .+$/,
      ],
      [
        'a private key file that cannot be read',
        () => [keys.missing, keys.publicA],
        /^configuration error: SVC_JWT_PRIVATE_KEY_FILE: cannot read .*missing\.pem: ENOENT: no such file or directory$/,
      ],
      [
        'a public key file that is a directory',
        () => [keys.privateA, keys.keysDir],
        /^configuration error: SVC_JWT_PUBLIC_KEY_FILE: cannot read .*: EISDIR: illegal operation on a directory, read$/,
      ],
    ] as const)('%s', (_what, files, line) => {
      const [privateFile, publicFile] = files();
      const untouched = path.join(dir, `untouched-${crypto.randomUUID()}`);
      const res = run(
        [],
        {
          DATABASE_URL: `sqlite:${path.join(untouched, 'blog.sqlite3')}`,
          NODE_ENV: 'production',
          SVC_JWT_PRIVATE_KEY_FILE: privateFile,
          SVC_JWT_PUBLIC_KEY_FILE: publicFile,
          PORT: '0',
        },
        20_000,
      ); // a service that starts anyway is stopped here, and fails the test
      expect(res.status).toBe(1);
      expect(res.stdout).toBe('');
      const lines = res.stderr.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      expect(fs.existsSync(untouched)).toBe(false);
    });
  });

  it('migrate status lists applied and pending migrations; migrate rollback reverts the last N, refusing to lose rows', () => {
    const own = `sqlite:${path.join(dir, 'rollback.sqlite3')}`;
    const names = [
      '0001_initial',
      '0002_articles_is_published_created_at_and_more',
      '0003_alter_articles_author_id',
      '0004_articles_title_search_and_more',
    ];
    const fresh = run(['migrate', 'status'], { DATABASE_URL: own });
    expect({ status: fresh.status, stdout: fresh.stdout }).toEqual({
      status: 0,
      stdout: `${names.map((n) => `pending  ${n}`).join('\n')}\n0 applied, 4 pending\n`,
    });
    expect(run(['migrate'], { DATABASE_URL: own }).status).toBe(0);
    const back = run(['migrate', 'rollback'], { DATABASE_URL: own });
    expect({ status: back.status, stdout: back.stdout }).toEqual({ status: 0, stdout: `reverted migrations: ${names[3]}\n` });
    const status = run(['migrate', 'status'], { DATABASE_URL: own });
    expect(status.stdout).toBe(
      `applied  ${names[0]} (batch 1)\napplied  ${names[1]} (batch 1)\napplied  ${names[2]} (batch 1)\npending  ${names[3]}\n3 applied, 1 pending\n`,
    );
    // createuser applies the pending migration first, as every command but `migrate status|rollback` does.
    expect(run(['createuser', '--username', 'kept', '--email', 'kept@example.com', '--password', 'pw'], { DATABASE_URL: own }).status).toBe(
      0,
    );
    const all = run(['migrate', 'status'], { DATABASE_URL: own }).stdout;
    expect(all).toBe(`${names.map((n) => `applied  ${n} (batch ${n === names[3] ? 2 : 1})`).join('\n')}\n4 applied, 0 pending\n`);
    const refused = run(['migrate', 'rollback', '4'], { DATABASE_URL: own });
    expect({ status: refused.status, stdout: refused.stdout, stderr: refused.stderr.trim() }).toEqual({
      status: 1,
      stdout: '',
      stderr: `migrate rollback: refused: reverting ${names[0]} would lose data: table users (1 row); nothing was reverted. Run it again with --allow-data-loss to revert anyway.`,
    });
    expect(run(['migrate', 'status'], { DATABASE_URL: own }).stdout).toBe(all);
    const bad = run(['migrate', 'rollback', 'all'], { DATABASE_URL: own });
    expect([bad.status, bad.stderr.split('\n')[0]]).toEqual([
      2,
      'migrate rollback: unexpected argument "all" (a number of migrations, or --allow-data-loss)',
    ]);
    const forced = run(['migrate', 'rollback', '4', '--allow-data-loss'], { DATABASE_URL: own });
    expect({ status: forced.status, stdout: forced.stdout }).toEqual({
      status: 0,
      stdout: `reverted migrations: ${names[3]}, ${names[2]}, ${names[1]}, ${names[0]}\n`,
    });
  });

  it('rejects an unknown command', () => {
    const res = run(['frobnicate'], { DATABASE_URL: url });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('unknown command "frobnicate"');
  });
});
