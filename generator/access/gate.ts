/**
 * The access gate: the matrix the specs now imply (matrix.ts) against the one the last build
 * committed (`access.json` in the output folder). A cell that opens (401/403 → hooks → 2xx), and a
 * new operation an anonymous caller may call, widen access: `build` refuses them, each at the spec
 * position that decides it, until `--allow-widen` acknowledges them; the acknowledgement is then
 * recorded in `access.json` and `access.md`, beside the matrix, where review sees it. Narrowing
 * passes. The acknowledgements stay in the files (a log of every widening accepted), so that `check`
 * renders the same bytes again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OPENNESS, type Access, type AccessMatrix, type AccessRow } from './matrix';
import type { SourceRef } from '../model/model';

export const ACCESS_JSON = 'access.json';
export const ACCESS_MD = 'access.md';

/** One widening: an operation's cell for one caller, before and after. */
export interface Widening {
  operationId: string;
  route: string;
  caller: string;
  /** `none` for an operation the previous build did not serve. */
  from: Access | 'none';
  to: Access;
}

/** What access.json holds. */
export interface CommittedAccess {
  callers: string[];
  operations: Record<string, { route: string; access: Record<string, Access>; hooks: string[] }>;
  acknowledged: Widening[];
}

/** The access.json the last build wrote into `outDir`, if any. */
export function committedAccess(outDir: string): CommittedAccess | undefined {
  const file = path.join(outDir, ACCESS_JSON);
  if (!fs.existsSync(file)) return undefined;
  return parseAccess(fs.readFileSync(file, 'utf8'));
}

/** The cell a caller had before: its own column, or for a caller kind new to the matrix (a new role), an authenticated user's. */
function before(previous: CommittedAccess['operations'][string], caller: string): Access | undefined {
  return previous.access[caller] ?? (caller.startsWith('role:') ? previous.access.authenticated : undefined);
}

/** Every widening from `previous` to `matrix`, in the matrix's order, with the row it is in. */
export function widenings(previous: CommittedAccess, matrix: AccessMatrix): { widening: Widening; row: AccessRow }[] {
  const out: { widening: Widening; row: AccessRow }[] = [];
  for (const row of matrix.rows) {
    const old = previous.operations[row.operationId];
    // A new operation, of a resource that was there (re-enabled by `disable`, a new action or
    // relation) or of a new resource alike: a new resource left to the defaults is writable by
    // anyone, and its rows among the others in access.md are easy to pass over.
    for (const caller of matrix.callers) {
      const to = row.access[caller.name];
      if (!old) {
        // A new operation widens access when anyone may call it without credentials.
        if (caller.name === 'anonymous' && OPENNESS[to] > 0)
          out.push({ widening: { operationId: row.operationId, route: row.route, caller: caller.name, from: 'none', to }, row });
        continue;
      }
      const from = before(old, caller.name);
      if (from !== undefined && OPENNESS[to] > OPENNESS[from])
        out.push({ widening: { operationId: row.operationId, route: row.route, caller: caller.name, from, to }, row });
    }
  }
  return out;
}

/** The message of a widening the build refuses. */
export function wideningMessage(w: Widening, hint = `; if intended, build with --allow-widen (recorded in ${ACCESS_MD})`): string {
  return `access widened: ${wideningText(w)}${hint}`;
}

/** A widening in words: `create_note (POST /notes/) for anonymous: 401 → 2xx`. */
export function wideningText(w: Widening): string {
  return `${w.operationId} (${w.route}) for ${w.caller}: ${w.from === 'none' ? 'a new operation' : w.from} → ${w.to}`;
}

/** Parses an access.json's text (as `git show` gives a revision's). */
export function parseAccess(text: string): CommittedAccess {
  const parsed = JSON.parse(text) as Partial<CommittedAccess>;
  return { callers: parsed.callers ?? [], operations: parsed.operations ?? {}, acknowledged: parsed.acknowledged ?? [] };
}

/**
 * The widenings since `base` (a revision's access.json) that `current`'s acknowledgements made since
 * then do not cover: an acknowledgement covers a widening of the same operation for the same caller
 * to the same cell (the log only grows, so those since are the ones `base` does not hold).
 */
export function unacknowledgedSince<T extends { widening: Widening }>(
  base: CommittedAccess,
  current: CommittedAccess | undefined,
  widened: readonly T[],
): T[] {
  const key = (w: Widening) => `${w.operationId} ${w.caller} ${w.from} ${w.to}`;
  const before = new Map<string, number>();
  for (const w of base.acknowledged) before.set(key(w), (before.get(key(w)) ?? 0) + 1);
  const since = new Set<string>();
  for (const w of current?.acknowledged ?? []) {
    const n = before.get(key(w)) ?? 0;
    if (n > 0) before.set(key(w), n - 1);
    else since.add(`${w.operationId} ${w.caller} ${w.to}`);
  }
  return widened.filter(({ widening: w }) => !since.has(`${w.operationId} ${w.caller} ${w.to}`));
}

const isRoles = (s: SourceRef) => s.path.some((p) => p === 'permission_roles' || p === 'hard_delete_roles');

/**
 * Where the rule that widened a cell is written: the first of the row's sources that `exists`
 * finds in its file. A cell that was a 403 opened by its roles (or their removal: then the roles'
 * parent key), one that was a 401 or is new by its authenticators.
 */
export function sourceOf(row: AccessRow, widening: Widening, exists: (source: SourceRef) => boolean): SourceRef {
  const roles = row.sources.filter(isRoles).flatMap((s) => [s, { file: s.file, path: s.path.slice(0, -1) }]);
  const others = row.sources.filter((s) => !isRoles(s));
  const candidates = widening.from === '403' ? [...roles, ...others] : others;
  return candidates.find(exists) ?? row.sources[row.sources.length - 1];
}

/** The committed form of a matrix and the acknowledgements. */
export function accessJson(matrix: AccessMatrix, acknowledged: readonly Widening[]): string {
  const operations: CommittedAccess['operations'] = {};
  for (const row of matrix.rows) operations[row.operationId] = { route: row.route, access: row.access, hooks: row.hooks };
  const doc: CommittedAccess = { callers: matrix.callers.map((c) => c.name), operations, acknowledged: [...acknowledged] };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

const CELL: Record<Access, string> = { '401': '401', '403': '403', hooks: 'hooks', '2xx': '2xx' };

/** The matrix as a Markdown table, then the widenings acknowledged. */
export function accessMarkdown(title: string, matrix: AccessMatrix, acknowledged: readonly Widening[]): string {
  const callers = matrix.callers.map((c) => c.name);
  const lines = [
    '<!-- Code generated by svcgen. DO NOT EDIT. -->',
    `# Access matrix of the ${title}`,
    '',
    'What each kind of caller gets from each operation under the rules the specs declare: `401` refused',
    'without credentials the operation accepts, `403` refused although authenticated, `2xx` served,',
    '`hooks` let through by the declared rules, then decided by the hooks named in the last column.',
    '`svcgen explain-access <caller> <operation>` says which rule decides a cell. A build that widens',
    'a cell stops unless given `--allow-widen`, and records the widening below.',
    '',
    `| Operation | Route | ${callers.join(' | ')} | Hooks |`,
    `|---|---|${callers.map(() => '---').join('|')}|---|`,
    ...matrix.rows.map(
      (r) => `| \`${r.operationId}\` | \`${r.route}\` | ${callers.map((c) => CELL[r.access[c]]).join(' | ')} | ${r.hooks.join(', ')} |`,
    ),
    '',
    '## Widened access, acknowledged',
    '',
  ];
  if (!acknowledged.length) lines.push('None.');
  else
    for (const w of acknowledged)
      lines.push(`- \`${w.operationId}\` (\`${w.route}\`) for ${w.caller}: ${w.from === 'none' ? 'a new operation' : w.from} → ${w.to}`);
  return `${lines.join('\n')}\n`;
}

/** Which rule decides a cell, in words: `svcgen explain-access`. */
export function explain(matrix: AccessMatrix, caller: string, operation: string): string | undefined {
  const row = matrix.rows.find((r) => r.operationId === operation || r.route === operation);
  if (!row || !(caller in row.access)) return undefined;
  return [`${row.operationId} (${row.route}) for ${caller}: ${row.access[caller]}`, ...row.rules[caller].map((r) => `  - ${r}`)].join('\n');
}
