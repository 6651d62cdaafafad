import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatDiagnostic } from '../../generator/load/diagnostics';
import { validate } from '../../generator/pipeline';

/** A copy of the showcase specs with one line of one file replaced. */
function specsWith(file: string, from: string, to: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-hooks-'));
  fs.cpSync(path.resolve(__dirname, '../fixtures/showcase/specs'), dir, { recursive: true });
  const p = path.join(dir, file);
  const text = fs.readFileSync(p, 'utf8');
  expect(text).toContain(from);
  fs.writeFileSync(p, text.replace(from, to));
  return dir;
}

describe('hook exports', () => {
  it('accepts specs whose hooks are all exported', () => {
    expect(validate(path.resolve(__dirname, '../fixtures/showcase/specs'))).toEqual([]);
  });

  it('reports a lifecycle hook the module does not export, at the spec position', () => {
    const dir = specsWith('resources/widgets.yaml', 'after_create: explodeOnRequest', 'after_create: explodeOnRequset');
    expect(validate(dir, dir).map(formatDiagnostic)).toEqual([
      'resources/widgets.yaml:36:19: hook "explodeOnRequset" is not exported by hooks/widgets.ts (did you mean "explodeOnRequest"?): export it from that module or fix the name',
    ]);
  });

  it('reports a queryset_write hook the module does not export, at the spec position', () => {
    const dir = specsWith(
      'resources/tickets.yaml',
      '  queryset_request: hideArchived\n',
      '  queryset_request: hideArchived\n  queryset_write: hideArchve\n',
    );
    expect(validate(dir, dir).map(formatDiagnostic)).toEqual([
      'resources/tickets.yaml:28:19: hook "hideArchve" is not exported by hooks/tickets.ts (did you mean "hideArchived"?): export it from that module or fix the name',
    ]);
  });

  it('reports a custom paginator and an exception handler that are missing', () => {
    const dir = specsWith('resources/gadgets.yaml', 'class: TwoPerPagePagination', 'class: ThreePerPagePagination');
    fs.writeFileSync(
      path.join(dir, 'service.yaml'),
      fs.readFileSync(path.join(dir, 'service.yaml'), 'utf8').replace('TeapotError: handleTeapot', 'TeapotError: handleKettle'),
    );
    expect(validate(dir, dir).map(formatDiagnostic)).toEqual([
      'resources/gadgets.yaml:9:29: hook "ThreePerPagePagination" is not exported by hooks/gadgets.ts (did you mean "TwoPerPagePagination"?): export it from that module or fix the name',
      'service.yaml:19:16: hook "handleKettle" is not exported by hooks/service.ts: export it from that module or fix the name',
    ]);
  });

  it('does not count a non-exported function of the module', () => {
    const dir = specsWith('hooks/widgets.ts', 'export function refuseLocked', 'function refuseLocked');
    const out = validate(dir, dir).map(formatDiagnostic);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^resources\/widgets\.yaml:\d+:\d+: hook "refuseLocked" is not exported by hooks\/widgets\.ts/);
  });
});
