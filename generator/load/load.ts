/**
 * Stage 1: find the spec files and parse them, keeping every node's source position.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Document, isNode, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import type { Diagnostic, Position } from './diagnostics';

export type YamlPath = ReadonlyArray<string | number>;

/** Where something was written in the specs: a file and the YAML path in it (for diagnostics of later stages). */
export interface SourceRef {
  file: string;
  path: (string | number)[];
}

export interface SpecFile {
  /** Path as shown in diagnostics: relative to the working directory, with forward slashes. */
  file: string;
  /** Absolute path on disk. */
  absPath: string;
  /** Path relative to the specs directory, with forward slashes (e.g. `resources/articles.yaml`). */
  relPath: string;
  kind: 'service' | 'resource';
  doc: Document.Parsed;
  lines: LineCounter;
  /** The parsed plain value (`doc.toJS()`); undefined for an empty file. */
  data: unknown;
}

export interface LoadedSpecs {
  /** Absolute path of the specs directory. */
  dir: string;
  /** The working directory diagnostics' paths are relative to. */
  cwd: string;
  service: SpecFile | undefined;
  resources: SpecFile[];
  diagnostics: Diagnostic[];
}

export const SERVICE_FILE = 'service.yaml';

/** Every `*.yaml` / `*.yml` below `dir`, sorted by path so that output never depends on the file system. */
function listYaml(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(entry.name)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

export function displayPath(absPath: string, cwd = process.cwd()): string {
  const rel = path.relative(cwd, absPath);
  return (rel.startsWith('..') || path.isAbsolute(rel) ? absPath : rel).split(path.sep).join('/');
}

export function loadSpecs(specsDir: string, cwd = process.cwd()): LoadedSpecs {
  const dir = path.resolve(cwd, specsDir);
  const diagnostics: Diagnostic[] = [];
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    diagnostics.push({ file: displayPath(dir, cwd), line: 1, column: 1, message: 'specs directory not found' });
    return { dir, cwd, service: undefined, resources: [], diagnostics };
  }
  let service: SpecFile | undefined;
  const resources: SpecFile[] = [];
  for (const absPath of listYaml(dir)) {
    const relPath = path.relative(dir, absPath).split(path.sep).join('/');
    const lines = new LineCounter();
    const text = fs.readFileSync(absPath, 'utf8');
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
    keepKeysAsWritten(doc);
    const file = displayPath(absPath, cwd);
    // After a syntax error the parser's reading of the rest of the file is a guess: its later errors
    // are consequences of the first, so only the first is shown.
    const syntax = doc.errors.find((e) => e.code !== 'DUPLICATE_KEY');
    for (const err of syntax ? [syntax] : [...doc.errors, ...doc.warnings]) {
      const pos = lines.linePos(err.pos[0]);
      const hint = syntax ? flowBraceHint(text, err.pos[0]) : '';
      diagnostics.push({ file, line: pos.line, column: pos.col, message: yamlMessage(err.message, err.code) + hint });
    }
    const spec: SpecFile = {
      file,
      absPath,
      relPath,
      kind: relPath === SERVICE_FILE ? 'service' : 'resource',
      doc,
      lines,
      data: doc.errors.length ? undefined : doc.toJS(),
    };
    if (spec.kind === 'service') service = spec;
    else resources.push(spec);
  }
  if (!service) {
    diagnostics.push({
      file: displayPath(path.join(dir, SERVICE_FILE), cwd),
      line: 1,
      column: 1,
      message: `missing service file ${SERVICE_FILE}`,
    });
  }
  return { dir, cwd, service, resources, diagnostics };
}

/** True when a file is not valid YAML (duplicate keys aside): nothing read from it can be trusted. */
export function hasSyntaxError(spec: SpecFile): boolean {
  return spec.doc.errors.some((e) => e.code !== 'DUPLICATE_KEY');
}

/**
 * Inside a flow collection (`{...}` or `[...]`), `{` opens a map, so an unquoted path parameter
 * (`{path: /things/{id}/}`) breaks the line. When the error sits in such a value, say to quote it.
 */
function flowBraceHint(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', offset);
  const line = text.slice(start, end < 0 ? undefined : end);
  const column = offset - start;
  // A plain (unquoted) value holding `{name}`, after `key: ` or after the `[`, `{` or `,` of a flow collection.
  const value = /(?:([A-Za-z_][\w-]*):\s+|[[{,]\s*)([^\s"'{}[\],#][^\s,{}[\]]*\{[A-Za-z_]\w*\}[^\s,\]]*?)(?=\s*[,}\]])/g;
  for (const m of line.matchAll(value)) {
    const from = m.index + m[0].length - m[2].length;
    if (column < from || column > from + m[2].length) continue;
    const quoted = `"${m[2]}"`;
    return ` (inside a flow collection, "{" starts a map: quote the value, ${m[1] ? `${m[1]}: ${quoted}` : quoted})`;
  }
  return '';
}

/**
 * Map keys are names: `null:`, `true:` or `1:` mean the strings "null", "true" and "1", not YAML's
 * null, boolean or number (so `null: true` on a field reads as Django's `null=True`).
 */
function keepKeysAsWritten(doc: Document.Parsed): void {
  visit(doc, {
    Pair(_, pair) {
      const key = pair.key;
      if (isScalar(key) && typeof key.value !== 'string' && typeof key.source === 'string') key.value = key.source;
    },
  });
}

function yamlMessage(message: string, code: string): string {
  if (code === 'DUPLICATE_KEY')
    return `duplicate name: ${message.replace(/^Map keys must be unique.*$/s, 'this key appears twice in the same map')}`;
  return `YAML: ${message.split('\n')[0]}`;
}

/**
 * Position of the node at `at` in a spec file. With `key` true, the position of the map key
 * (where the name is written) rather than its value. Falls back to the nearest ancestor that exists.
 */
export function positionOf(spec: SpecFile, at: YamlPath, key = false): Position {
  for (let n = at.length; n >= 0; n--) {
    const p = at.slice(0, n);
    let offset: number | undefined;
    if (key && n === at.length && n > 0) {
      const parent = p.length > 1 ? spec.doc.getIn(p.slice(0, -1), true) : spec.doc.contents;
      const pair = isNode(parent) && 'items' in parent ? findPair(parent.items as unknown[], p[p.length - 1]) : undefined;
      if (pair && isNode(pair.key)) offset = pair.key.range?.[0];
    }
    if (offset === undefined) {
      const node = p.length ? spec.doc.getIn(p, true) : spec.doc.contents;
      if (isNode(node)) offset = node.range?.[0];
    }
    if (offset !== undefined) {
      const lc = spec.lines.linePos(offset);
      return { line: lc.line, column: lc.col };
    }
  }
  return { line: 1, column: 1 };
}

function findPair(items: unknown[], key: string | number): { key: unknown } | undefined {
  for (const item of items) {
    if (item && typeof item === 'object' && 'key' in item) {
      const k = (item as { key: unknown }).key;
      const v = isNode(k) && 'value' in k ? (k as { value: unknown }).value : k;
      if (v === key || String(v) === String(key)) return item as { key: unknown };
    }
  }
  return undefined;
}

export function diagnosticAt(spec: SpecFile, at: YamlPath, message: string, key = false): Diagnostic {
  return { file: spec.file, ...positionOf(spec, at, key), message };
}
