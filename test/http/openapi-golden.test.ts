/**
 * The OpenAPI documents, pinned: what the blog, the showcase and the querying fixture serve at
 * `openapi.json` is, byte for byte, the compact form of its golden in test/fixtures/openapi/ (key
 * order included). A change to the document builder, a runtime schema or a template that changes
 * what callers read fails here until `npm run update:openapi` (or `npm run update:goldens`) writes
 * the goldens again and the diff is reviewed.
 */
import * as fs from 'node:fs';
import { DOCUMENTED, goldenFile, layout, servedDocument } from '../support/openapi-goldens';

describe.each(Object.keys(DOCUMENTED))('the OpenAPI document of the %s', (name) => {
  it('is its golden, byte for byte', async () => {
    const served = await servedDocument(name);
    const golden = fs.readFileSync(goldenFile(name), 'utf8');
    // Laid out first, so that a difference shows as a diff of lines; then the exact bytes.
    expect(layout(served)).toBe(golden);
    expect(served).toBe(JSON.stringify(JSON.parse(golden)));
  });
});
