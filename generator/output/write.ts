/**
 * Stage 6: write. `svcgen build` writes the bytes `generate` returned, touching only files whose
 * content changed, and removes the files an earlier build wrote (its manifest lists them) that no
 * longer belong, and files no build recorded that start with svcgen's header (`strayFiles`: a copy of
 * a generated file, or one left by a build whose manifest is gone). Other files are never touched.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { previousFiles, strayFiles } from './manifest';

export interface BuildResult {
  written: string[];
  unchanged: string[];
  removed: string[];
}

/** Writes only files whose bytes changed, and removes files a previous build rendered that no longer belong. */
export function writeOutput(outDir: string, files: Map<string, string>): BuildResult {
  const result: BuildResult = { written: [], unchanged: [], removed: [] };
  // Absolute and normalized, so that `./out`, `out/` and `out` all stop at the same folder.
  const root = path.resolve(outDir);
  // Hand-added files first: read before this build's writes, which are known files.
  for (const stale of [...previousFiles(outDir), ...strayFiles(outDir, files).generated]) {
    if (files.has(stale)) continue;
    const p = path.join(root, stale);
    if (fs.existsSync(p)) {
      fs.rmSync(p);
      result.removed.push(stale);
      removeEmptyDirs(path.dirname(p), root);
    }
  }
  for (const [name, text] of files) {
    const p = path.join(outDir, name);
    if (fs.existsSync(p) && fs.readFileSync(p, 'utf8') === text) {
      result.unchanged.push(name);
      continue;
    }
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    result.written.push(name);
  }
  return result;
}

/** Removes `dir` and its parents while they are empty, up to (not including) `stop`; both absolute and normalized. */
function removeEmptyDirs(dir: string, stop: string): void {
  for (let d = dir; d.startsWith(stop + path.sep); d = path.dirname(d)) {
    if (fs.readdirSync(d).length) return;
    fs.rmdirSync(d);
  }
}
