/**
 * `svcgen init --db`: the project installs the driver of the database it runs on, at the range the
 * runtime names among its optional peers, and ioredis for compose.yaml's Redis; no other driver.
 * Its tests (an in-memory SQLite database) and a local `npm start` need better-sqlite3 whatever the
 * database, so a project on PostgreSQL or MySQL/MariaDB has it as a devDependency. compose.yaml and
 * the README speak of the chosen database. (test/init/package.test.ts installs the default one.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_INIT_DATABASE, initProject, InitError } from '../../generator/cli/init';

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const PEERS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, 'runtime', 'package.json'), 'utf8')).peerDependencies;

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-init-db-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const CASES = [
  { db: 'sqlite', driver: 'better-sqlite3', dev: {}, url: undefined, label: 'its SQLite file in a volume' },
  {
    db: 'postgres',
    driver: 'pg',
    dev: { 'better-sqlite3': PEERS['better-sqlite3'] },
    url: 'postgres://app:app@db:5432/app',
    label: 'PostgreSQL',
  },
  {
    db: 'mysql',
    driver: 'mysql2',
    dev: { 'better-sqlite3': PEERS['better-sqlite3'] },
    url: 'mysql://app:app@db:3306/app',
    label: 'MySQL/MariaDB',
  },
] as const;

describe.each(CASES)('svcgen init --db $db', ({ db, driver, dev, url, label }) => {
  let app: string;
  let result: Awaited<ReturnType<typeof initProject>>;
  beforeAll(async () => {
    app = path.join(tmp, db, 'app');
    result = await initProject(app, { svcgen: VERSION, db });
  });

  it('depends on its driver and ioredis at the runtime’s ranges, and on no other driver', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toEqual({ '@svcgen/runtime': VERSION, [driver]: PEERS[driver], ioredis: PEERS.ioredis });
    expect(pkg.devDependencies).toEqual({ ...dev, svcgen: VERSION });
    expect(result.packages).toEqual({ dependencies: { [driver]: PEERS[driver], ioredis: PEERS.ioredis }, devDependencies: dev });
    // Ranges, never exact versions, for every third-party package.
    for (const [name, range] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
      if (name !== '@svcgen/runtime' && name !== 'svcgen')
        expect({ name, range }).toEqual({ name, range: expect.stringMatching(/^\^\d+\.\d+\.\d+$/) });
    }
  });

  it('marks the generated code as generated for review tools (.gitattributes), and ignores what is built or local', () => {
    expect(fs.readFileSync(path.join(app, '.gitattributes'), 'utf8')).toContain('generated/** linguist-generated=true\n');
    expect(fs.readFileSync(path.join(app, '.gitignore'), 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['node_modules/', 'dist/', 'data/']),
    );
  });

  it('runs the chosen database in compose.yaml and says so in the README', () => {
    const compose = parse(fs.readFileSync(path.join(app, 'compose.yaml'), 'utf8')) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    expect(compose.services.api.environment?.DATABASE_URL).toBe(url);
    const readme = fs.readFileSync(path.join(app, 'README.md'), 'utf8');
    expect(readme).toContain(`\`compose.yaml\` runs the service with ${label}, in two worker processes`);
    expect(readme).toContain(`\`${driver}\`, a dependency: the driver of`);
  });

  it('ships an image without the tests’ SQLite driver when the service runs on another database', () => {
    // npm keeps a devDependency the runtime names as an optional peer unless optional packages go too.
    const prune = fs.readFileSync(path.join(app, 'Dockerfile'), 'utf8').match(/npm prune .*/g);
    expect(prune).toEqual([db === 'sqlite' ? 'npm prune --omit=dev' : 'npm prune --omit=dev --omit=optional']);
  });
});

describe('svcgen init', () => {
  it('sets a project up for SQLite unless told otherwise', async () => {
    expect(DEFAULT_INIT_DATABASE).toBe('sqlite');
    const result = await initProject(path.join(tmp, 'default'), { svcgen: VERSION });
    expect(Object.keys(result.packages.dependencies)).toEqual(['better-sqlite3', 'ioredis']);
  });

  it('refuses a database it does not know, before writing anything', async () => {
    await expect(initProject(path.join(tmp, 'oracle'), { svcgen: VERSION, db: 'oracle' })).rejects.toThrow(
      new InitError('--db oracle: give one of sqlite, postgres, mysql'),
    );
    expect(fs.existsSync(path.join(tmp, 'oracle'))).toBe(false);
  });
});
