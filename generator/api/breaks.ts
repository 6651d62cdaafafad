/**
 * The breaking-change gate: the API surface the specs now imply (surface.ts) against the one the
 * last build committed (`api.json` in the output folder). A change that breaks a client written
 * against the committed API stops `build`, each at the spec position that caused it, until
 * `--allow-breaking` acknowledges it; the acknowledgement is recorded in `api.json`, beside the
 * surface, where review sees it. Additive changes pass: a new operation, response field, optional
 * request field or status, a wider type or enum.
 *
 * Breaking: an operation removed or renamed (its id or its route), a success status removed, a
 * response field removed or its type changed, or made nullable; a request field removed or renamed
 * (an optional one too: a client still sending it has its value ignored, or refused under
 * `extra_fields: forbid`), made required (or a new required one), its type changed, made
 * non-nullable, its enum narrowed or its max_length shortened; a path or query parameter removed (an optional one too: the service would
 * ignore it), made required (or a new required one), its type changed, its enum narrowed (`ordering`
 * losing a name, a `fields` losing a field) or its range narrowed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SourceRef } from '../model/model';
import type { ApiField, ApiSources, ApiSurface } from './surface';

export const API_JSON = 'api.json';

export interface Break {
  operationId: string;
  route: string;
  message: string;
}

export interface CommittedApi extends ApiSurface {
  acknowledged: Break[];
}

/** The api.json the last build wrote into `outDir`, if any. */
export function committedApi(outDir: string): CommittedApi | undefined {
  const file = path.join(outDir, API_JSON);
  if (!fs.existsSync(file)) return undefined;
  return parseApi(fs.readFileSync(file, 'utf8'));
}

export function parseApi(text: string): CommittedApi {
  const parsed = JSON.parse(text) as Partial<CommittedApi>;
  return { operations: parsed.operations ?? {}, acknowledged: parsed.acknowledged ?? [] };
}

export function apiJson(surface: ApiSurface, acknowledged: readonly Break[]): string {
  return `${JSON.stringify({ operations: surface.operations, acknowledged }, null, 2)}\n`;
}

/** A break found, with the places in the specs to report it at, the most specific first. */
export interface FoundBreak {
  brk: Break;
  at: SourceRef[];
}

const describeType = (f: ApiField) => `${f.type}${f.nullable ? ' | null' : ''}`;

/**
 * The breaks of one field list: a request body's (`request`), a response's, or an operation's path
 * or query parameters (`param`: sent by the client as a request field is, but a parameter removed
 * is a break even when optional, for the service would ignore it and answer otherwise).
 */
function fieldBreaks(
  before: Record<string, ApiField>,
  after: Record<string, ApiField>,
  kind: 'request' | 'response' | 'param',
  where: string,
  prefix = '',
): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  const request = kind !== 'response';
  const noun = kind === 'param' ? 'parameter' : 'field';
  for (const [name, old] of Object.entries(before)) {
    const now = after[name];
    const label = `${prefix}${name}`;
    if (!now) {
      // An optional request field too: a client still sending it would get a 2xx and its value dropped.
      if (kind === 'param' || !request) out.push({ field: name, message: `${where} ${noun} "${label}" removed` });
      else if (old.required) out.push({ field: name, message: `${where} field "${label}" removed (clients send it)` });
      else out.push({ field: name, message: `${where} field "${label}" removed (clients may still send it)` });
      continue;
    }
    if (old.type !== now.type) {
      out.push({ field: name, message: `${where} ${noun} "${label}" changed type: ${old.type} → ${now.type}` });
      continue;
    }
    if (request) {
      if (!old.required && now.required) out.push({ field: name, message: `${where} ${noun} "${label}" became required` });
      if (old.nullable && !now.nullable) out.push({ field: name, message: `${where} ${noun} "${label}" no longer accepts null` });
      const lost = old.enum && now.enum ? old.enum.filter((v) => !now.enum!.includes(v)) : !old.enum && now.enum ? ['any other value'] : [];
      if (lost.length)
        out.push({
          field: name,
          message: `${where} ${noun} "${label}" narrowed its values: ${lost.map((v) => JSON.stringify(v)).join(', ')} no longer accepted`,
        });
      if (now.maxLength !== undefined && (old.maxLength === undefined || now.maxLength < old.maxLength)) {
        out.push({
          field: name,
          message: `${where} ${noun} "${label}" narrowed max_length: ${old.maxLength ?? 'none'} → ${now.maxLength}`,
        });
      }
      if (now.minimum !== undefined && (old.minimum === undefined || now.minimum > old.minimum)) {
        out.push({ field: name, message: `${where} ${noun} "${label}" narrowed its minimum: ${old.minimum ?? 'none'} → ${now.minimum}` });
      }
      if (now.maximum !== undefined && (old.maximum === undefined || now.maximum < old.maximum)) {
        out.push({ field: name, message: `${where} ${noun} "${label}" narrowed its maximum: ${old.maximum ?? 'none'} → ${now.maximum}` });
      }
    } else if (!old.nullable && now.nullable) {
      out.push({ field: name, message: `${where} field "${label}" may now be null: ${describeType(old)} → ${describeType(now)}` });
    }
    if (old.fields && now.fields)
      out.push(...fieldBreaks(old.fields, now.fields, kind, where, `${label}.`).map((b) => ({ ...b, field: name })));
  }
  if (request) {
    for (const [name, now] of Object.entries(after)) {
      if (!before[name] && now.required) out.push({ field: name, message: `${where} has a new required ${noun} "${name}"` });
    }
  }
  return out;
}

/**
 * An operation still served on the path of a removed one (or, failing that, under the same first
 * segment): its resource's viewset is where the removal is written (`disable`, an auth key, …).
 */
function neighbour(route: string, after: ApiSurface): string {
  const pathOf = (r: string) => r.slice(r.indexOf(' ') + 1);
  const first = (r: string) => pathOf(r).split('/').filter(Boolean).slice(0, 2).join('/');
  const ops = Object.entries(after.operations);
  return (ops.find(([, op]) => pathOf(op.route) === pathOf(route)) ?? ops.find(([, op]) => first(op.route) === first(route)))?.[0] ?? '';
}

/** Every break from `before` to `after`, each with where the specs now say what caused it. */
export function apiBreaks(before: ApiSurface, after: ApiSurface, sources: ApiSources): FoundBreak[] {
  const out: FoundBreak[] = [];
  const routes = new Map(Object.entries(after.operations).map(([id, op]) => [op.route, id]));
  for (const [id, old] of Object.entries(before.operations)) {
    const now = after.operations[id];
    const brk = (message: string, at: SourceRef[]) => out.push({ brk: { operationId: id, route: old.route, message }, at });
    if (!now) {
      const renamed = routes.get(old.route);
      if (renamed)
        brk(`operation ${id} (${old.route}) renamed to ${renamed}: clients call it by its operation id`, sources.operations[renamed] ?? []);
      else brk(`operation ${id} (${old.route}) removed`, sources.operations[neighbour(old.route, after)] ?? []);
      continue;
    }
    const opSources = sources.operations[id] ?? [];
    if (now.route !== old.route) brk(`operation ${id} moved: ${old.route} → ${now.route}`, opSources);
    for (const status of Object.keys(old.responses))
      if (!(status in now.responses)) brk(`operation ${id} (${old.route}) no longer answers ${status}`, opSources);
    for (const status of old.errors)
      if (!now.errors.includes(status)) brk(`operation ${id} (${old.route}) no longer documents the error ${status}`, opSources);
    const partBreaks = (
      part: string,
      b: Record<string, ApiField> | undefined | null,
      a: Record<string, ApiField> | undefined | null,
      request: boolean,
      where: string,
    ) => {
      if (!b || !a) return;
      for (const f of fieldBreaks(b, a, request ? 'request' : 'response', where)) {
        const own = sources.fields[`${id} ${part} ${f.field}`];
        brk(`operation ${id} (${old.route}): ${f.message}`, [
          ...(own ? [own] : []),
          ...(sources.schemas[`${id} ${part}`] ?? []),
          ...opSources,
        ]);
      }
    };
    partBreaks('body', old.body, now.body, true, 'request body');
    for (const [status, fields] of Object.entries(old.responses))
      partBreaks(status, fields, now.responses[status], false, `response ${status}`);
    // Parameters: a surface recorded before they were is compared from nothing (every one is new).
    for (const where of ['path', 'query'] as const) {
      for (const f of fieldBreaks(old[where] ?? {}, now[where] ?? {}, 'param', `${where}`)) {
        brk(`operation ${id} (${old.route}): ${f.message}`, [
          ...(sources.params[`${id} ${where} ${f.field}`] ?? sources.params[`${id} ${where}`] ?? []),
          ...opSources,
        ]);
      }
    }
  }
  return out;
}
