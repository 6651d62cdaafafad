/**
 * `svcgen check`: what `build` would change in the output folder, from the same bytes `build` would
 * write (check is build minus the write). Changed files come with a line diff.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { previousFiles, strayFiles } from './manifest';
import { SNAPSHOT_FILE } from '../migrate/history';

export interface Drift {
  changed: { file: string; diff: string }[];
  missing: string[];
  extra: string[];
  /** Files no build wrote that start with svcgen's header (copied or left over), which build removes; counted in `extra` too. */
  stray: string[];
  /**
   * Files of someone else's in the output folder (no build wrote them, not svcgen's) that
   * `.svcgenignore` does not list: `build` leaves them alone, `check` fails on them.
   */
  others: string[];
  /**
   * Migrations the specs call for that were never generated (the specs changed the schema after the
   * committed snapshot); set only when there are some, and not counted in `missing`.
   */
  newMigrations?: string[];
}

const MIGRATION_FILE = /^migrations\/\d{4}_[a-z0-9_]+\.ts$/;

/** What `build` would change in `outDir`; empty when the committed output is current. */
export function drift(outDir: string, files: Map<string, string>): Drift {
  const stray = strayFiles(outDir, files);
  const out: Drift = { changed: [], missing: [], extra: [], stray: stray.generated, others: stray.others };
  const hasSnapshot = fs.existsSync(path.join(outDir, SNAPSHOT_FILE));
  for (const [name, text] of files) {
    const p = path.join(outDir, name);
    if (!fs.existsSync(p) && hasSnapshot && MIGRATION_FILE.test(name)) (out.newMigrations ??= []).push(name);
    else if (!fs.existsSync(p)) out.missing.push(name);
    else {
      const current = fs.readFileSync(p, 'utf8');
      if (current !== text) out.changed.push({ file: name, diff: unifiedDiff(name, current, text) });
    }
  }
  for (const stale of previousFiles(outDir)) if (!files.has(stale) && fs.existsSync(path.join(outDir, stale))) out.extra.push(stale);
  out.extra.push(...out.stray);
  return out;
}

/** A compact line diff (committed → expected) with a few lines of context. */
export function unifiedDiff(name: string, a: string, b: string, context = 2): string {
  const x = a.split('\n');
  const y = b.split('\n');
  // Longest common subsequence on lines; generated files are small enough for the quadratic table.
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: { t: ' ' | '-' | '+'; line: string; i: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) ops.push({ t: ' ', line: x[i++], i: j++ });
    // Removed lines before added ones, as in any unified diff.
    else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ t: '-', line: x[i++], i: j });
    else ops.push({ t: '+', line: y[j], i: j++ });
  }
  const keep = new Set<number>();
  ops.forEach((op, k) => {
    if (op.t !== ' ') for (let d = -context; d <= context; d++) keep.add(k + d);
  });
  const lines = [`--- ${name} (committed)`, `+++ ${name} (generated from the specs)`];
  let last = -1;
  ops.forEach((op, k) => {
    if (!keep.has(k)) return;
    if (last >= 0 && k !== last + 1) lines.push('@@');
    lines.push(`${op.t}${op.line}`);
    last = k;
  });
  return lines.join('\n');
}
