/**
 * The compose files: the blog's `compose.yaml` and the one `svcgen init` writes. The README says to
 * set SVC_REDIS_URL whenever more than one process serves (SVC_WORKERS > 1 included), or each
 * process counts failed logins and rate limits on its own: each file runs its API with two workers,
 * so it runs Redis too, started healthy before the API, and points SVC_REDIS_URL at it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Handlebars from 'handlebars';
import { parse } from 'yaml';
import { INIT_TEMPLATES } from '../../generator/cli/init';

const ROOT = path.resolve(__dirname, '../..');

interface Compose {
  services: Record<string, { image?: string; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; healthcheck?: { test: string[] } }>;
}

const blog = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as Compose;
const init = parse(Handlebars.compile(fs.readFileSync(path.join(INIT_TEMPLATES, 'compose.yaml.hbs'), 'utf8'), { noEscape: true, strict: true })({ title: 'App API', dbName: 'app' })) as Compose;

describe.each([
  ['the blog', blog],
  ['svcgen init', init],
] as const)('compose.yaml of %s', (_, compose) => {
  it('runs two API workers with Redis, as the README asks of more than one process', () => {
    const api = compose.services.api;
    expect(api.environment?.SVC_WORKERS).toBe('2');
    expect(api.environment?.SVC_REDIS_URL).toBe('redis://redis:6379');
    expect(api.depends_on).toEqual({ db: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    expect(compose.services.redis).toEqual({
      image: 'redis:7',
      healthcheck: { test: ['CMD', 'redis-cli', 'ping'], interval: '5s', timeout: '3s', retries: 10 },
    });
  });
});
