/**
 * `npm run update:openapi` (part of `npm run update:goldens`): writes the OpenAPI documents the
 * blog, the showcase and the querying fixture serve into test/fixtures/openapi/. Review the diff:
 * it is every change to what the services' callers read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOCUMENTED, goldenFile, layout, OPENAPI_GOLDENS, servedDocument } from './openapi-goldens';

process.env.SVC_LOG_LEVEL ??= 'silent';

async function main() {
  fs.mkdirSync(OPENAPI_GOLDENS, { recursive: true });
  for (const name of Object.keys(DOCUMENTED)) {
    const file = goldenFile(name);
    const text = layout(await servedDocument(name));
    const changed = !fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text;
    if (changed) fs.writeFileSync(file, text);
    console.log(`  ${changed ? 'wrote    ' : 'unchanged'}  ${path.relative(path.resolve(__dirname, '../..'), file)}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
