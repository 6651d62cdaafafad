/**
 * The log's standard output (`batchedStdout`, runtime/http/logging.ts) in a process of its own:
 * every line arrives whole, in order and byte for byte, whether its size came with it (`writeLine`,
 * the request lines) or was measured (`write`, pino's lines), ASCII or not, longer than a batch or
 * still pending when the process exits; and no write is larger than a batch: 4 KiB to a pipe, 64 KiB
 * to a file.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FROM_SOURCES } from '../support/from-sources';

const root = path.resolve(__dirname, '../..');

/**
 * The child: writes 2,000 request lines (some with routes and user ids outside ASCII), a line of
 * pino's every 100, and a line of 70,000 bytes in the middle, and exits with the last batch still
 * pending; at exit it writes the size of each write to stdout and the text it sent to the file REPORT.
 */
const CHILD = `
const fs = require('node:fs');
const writeSync = fs.writeSync;
const sizes = [];
fs.writeSync = function (fd, data, ...rest) {
  const written = writeSync.call(this, fd, data, ...rest);
  if (fd === 1) sizes.push({ written, endsLine: Buffer.from(data).subarray(0, written).at(-1) === 10 });
  return written;
};
const { batchedStdout, requestLine } = require(${JSON.stringify(path.join(root, 'runtime/http/logging.ts'))});
const out = batchedStdout();
let sent = '';
// After the stream's own 'exit' listener, which writes what is pending.
process.on('exit', () => fs.writeFileSync(process.env.REPORT, JSON.stringify({ sizes, sent })));
const routes = ['/api/articles/:pk/', '/api/caf\\u00e9s/', '/api/\\u6587\\u7ae0/', '/api/\\ud83d\\ude00/', undefined];
const users = [undefined, 7, 'b\\u00e9la', '\\ud83d\\ude00'];
for (let i = 0; i < 2000; i++) {
  const { line, bytes } = requestLine('id-' + i, 'GET', routes[i % routes.length], 200, i / 100, users[i % users.length]);
  out.writeLine(line, bytes);
  sent += line;
  const others = [];
  if (i % 100 === 0) others.push(JSON.stringify({ level: 50, msg: 'err\\u00f6r ' + i }) + '\\n');
  if (i === 1000) others.push('x'.repeat(70000) + '\\n');
  for (const other of others) {
    out.write(other);
    sent += other;
  }
}
`;

interface Write {
  written: number;
  endsLine: boolean;
}

/** Runs the child with its stdout a pipe (collected) or the file `file`; resolves with its stdout and its writes. */
function runChild(dir: string, file?: string): Promise<{ stdout: string; sent: string; writes: Write[] }> {
  return new Promise((resolve, reject) => {
    const report = path.join(dir, 'report.json');
    const fd = file === undefined ? undefined : fs.openSync(file, 'w');
    const child = spawn(process.execPath, [...FROM_SOURCES, '-e', CHILD], {
      cwd: root,
      env: { ...process.env, REPORT: report },
      stdio: ['ignore', fd ?? 'pipe', 'pipe'],
    });
    if (fd !== undefined) fs.closeSync(fd);
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child exited ${code}: ${err}`));
      const stdout = (file === undefined ? Buffer.concat(out) : fs.readFileSync(file)).toString('utf8');
      const { sizes, sent } = JSON.parse(fs.readFileSync(report, 'utf8')) as { sizes: Write[]; sent: string };
      resolve({ stdout, sent, writes: sizes });
    });
  });
}

describe('batchedStdout', () => {
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-log-batches-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('to a pipe: every line whole and in order, in writes of at most 4 KiB that end with a line (but the long line, alone)', async () => {
    const { stdout, sent, writes } = await runChild(dir);
    expect(sent.length).toBeGreaterThan(300_000);
    expect(stdout).toBe(sent);
    const long = writes.filter((w) => w.written > 4096);
    expect(long).toEqual([{ written: 70001, endsLine: true }]);
    expect(writes.every((w) => w.endsLine)).toBe(true);
    // Batched: far fewer writes than the 2,021 lines.
    expect(writes.length).toBeLessThan(200);
  });

  it('to a file: the same bytes, in writes of at most 64 KiB (but the long line, alone)', async () => {
    const file = path.join(dir, 'stdout.log');
    const { stdout, sent, writes } = await runChild(dir, file);
    expect(stdout).toBe(sent);
    expect(writes.filter((w) => w.written > 65536)).toEqual([{ written: 70001, endsLine: true }]);
    expect(writes.every((w) => w.endsLine)).toBe(true);
    expect(writes.length).toBeLessThan(20);
  });
});
