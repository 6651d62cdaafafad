/**
 * `npm run update:diagnostics` (part of `npm run update:goldens`): writes the diagnostics reference,
 * docs/reference/diagnostics.md, from the case folders.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DIAGNOSTICS_PAGE, diagnosticsReference, ROOT } from './diagnostics-reference';

const text = diagnosticsReference();
const changed = !fs.existsSync(DIAGNOSTICS_PAGE) || fs.readFileSync(DIAGNOSTICS_PAGE, 'utf8') !== text;
if (changed) fs.writeFileSync(DIAGNOSTICS_PAGE, text);
console.log(`  ${changed ? 'wrote    ' : 'unchanged'}  ${path.relative(ROOT, DIAGNOSTICS_PAGE)}`);
