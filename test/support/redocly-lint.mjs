// Lints the OpenAPI document read from stdin with Redocly's recommended rules; prints the problems
// as JSON. A separate process because @redocly/openapi-core is an ES module and jest runs CommonJS.
// The rules to turn off come as arguments.
import { createConfig, lintFromString } from '@redocly/openapi-core';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const rules = Object.fromEntries(process.argv.slice(2).map((rule) => [rule, 'off']));
const config = await createConfig({ extends: ['recommended'], rules });
const problems = await lintFromString({ source: Buffer.concat(chunks).toString('utf8'), absoluteRef: 'openapi.json', config });
process.stdout.write(
  JSON.stringify(
    problems.map((p) => ({ severity: p.severity, ruleId: p.ruleId, message: p.message, pointer: p.location[0]?.pointer ?? '' })),
  ),
);
