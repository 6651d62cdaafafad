/**
 * The docs cannot point nowhere: every relative link in README.md, CHANGELOG.md and docs/**\/*.md
 * names a file or folder of the repository, and every `#anchor` a heading of the page it names
 * (or of its own page), spelt as GitHub spells heading anchors. External links (`https:`,
 * `mailto:`) are not followed. A failure lists `file:line: link: why`.
 *
 * The pages an npm package ships (its README, and what `files` in its package.json names: the
 * root package ships docs/ and CHANGELOG.md) are read from its tarball too, where a link can only
 * reach what the same tarball holds: every relative link of a shipped page names a file the
 * package ships, but the few listed in PACKAGE_EXCEPTIONS, each with its reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Pages linked to before they exist: written separately, in their own change. */
const PENDING = new Set(['docs/internals/testing.md']);

/** GitHub's anchor of a heading: its text as rendered, lower-cased, punctuation but `-` and `_` dropped, spaces as `-`. */
export function slugOf(heading: string): string {
  return heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[*`]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The lines of a page outside fenced code blocks, with their numbers. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const f = line.match(/^\s*(`{3,}|~{3,})/);
    if (f) {
      if (fence === null) fence = f[1];
      else if (f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** The anchors of a page: its headings (a repeated one gets `-1`, `-2`, …) and explicit `id`/`name` attributes. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const h = line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (h) {
      const base = slugOf(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** The links of a page: inline `[text](target)` and reference definitions `[label]: target`, outside code. */
export function linksOf(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  for (const { line, text: raw } of proseLines(text)) {
    const prose = raw.replace(/(`+)[^`]*?\1/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line, target: m[1] });
    const def = prose.match(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/);
    if (def) links.push({ line, target: def[1] });
  }
  return links;
}

/**
 * The problems of the links of one page, `file` relative to the repository: `read` gives a page's
 * text (undefined when it does not exist), `exists` whether a path is a file or folder.
 */
export function brokenLinks(
  file: string,
  text: string,
  read: (rel: string) => string | undefined,
  exists: (rel: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const rel =
      pathPart === ''
        ? file
        : pathPart.startsWith('/')
          ? path.posix.normalize(pathPart.slice(1))
          : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    const where = `${file}:${line}: ${target}`;
    if (rel.startsWith('..')) {
      problems.push(`${where}: outside the repository`);
      continue;
    }
    if (PENDING.has(rel) && !exists(rel)) continue;
    if (rel !== file && !exists(rel)) {
      problems.push(`${where}: no file ${rel}`);
      continue;
    }
    if (anchor === undefined) continue;
    const page = rel === file ? text : rel.endsWith('.md') ? read(rel) : undefined;
    if (page === undefined) problems.push(`${where}: an anchor into ${rel}, which is no Markdown page`);
    else if (!anchorsOf(page).has(anchor)) problems.push(`${where}: no heading #${anchor} in ${rel}`);
  }
  return problems;
}

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    return e.isDirectory() ? markdownUnder(rel) : e.name.endsWith('.md') ? [rel] : [];
  });
}

const pages = ['README.md', 'CHANGELOG.md', ...markdownUnder('docs')];

/** A package of the repository: its folder (`''` for the root) and the `files` of its package.json. */
export interface Package {
  dir: string;
  files: string[];
}

/**
 * Whether `npm pack` of `pkg` holds `rel` (a path of the repository): its package.json, README and
 * LICENSE are always packed, and then what `files` names (a folder: everything under it; an entry
 * starting with `!` leaves out what it names).
 */
export function packs(pkg: Package, rel: string): boolean {
  const prefix = pkg.dir ? `${pkg.dir}/` : '';
  if (!rel.startsWith(prefix)) return false;
  const inner = rel.slice(prefix.length);
  if (inner.startsWith('node_modules/')) return false;
  if (/^(package\.json|README(\.md)?|LICEN[CS]E(\.md)?)$/i.test(inner)) return true;
  const names = (entry: string) => {
    const e = entry.replace(/\/$/, '');
    return inner === e || inner.startsWith(`${e}/`);
  };
  return pkg.files.some((f) => !f.startsWith('!') && names(f)) && !pkg.files.some((f) => f.startsWith('!') && names(f.slice(1)));
}

/** Links of shipped pages that name what the package does not ship, on purpose: the page's path and a pattern of the link's target. */
export const PACKAGE_EXCEPTIONS: Array<{ page: string; target: RegExp; why: string }> = [
  {
    page: 'docs/reference/diagnostics.md',
    target: /^test\/cases\/[\w-]+\/specs\/$/,
    why: "each diagnostic's example specs, a case folder of the repository; the page is made by npm run update:diagnostics",
  },
  {
    page: 'docs/internals/repository-layout.md',
    target: /^runtime\/README\.md$/,
    why: "the layout of the repository names the runtime's folder; the runtime's README ships in @svcgen/runtime",
  },
];

/** The relative links of `file`, a page `pkg` ships, that name a file it does not ship (anchors aside: the test above checks them). */
export function unpackedLinks(pkg: Package, file: string, text: string): string[] {
  const problems: string[] = [];
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const pathPart = decodeURI(target.split('#')[0]);
    const rel = pathPart.startsWith('/')
      ? path.posix.normalize(pathPart.slice(1))
      : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    if (packs(pkg, rel) || PACKAGE_EXCEPTIONS.some((e) => e.page === file && e.target.test(rel))) continue;
    problems.push(`${file}:${line}: ${target}: ${rel} is not in the package ${pkg.dir || '.'}`);
  }
  return problems;
}

const packageOf = (dir: string): Package => ({
  dir,
  files: (JSON.parse(fs.readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as { files?: string[] }).files ?? [],
});
const packages = [packageOf(''), packageOf('runtime')];
const shippedPages = (pkg: Package) => [...pages, 'runtime/README.md'].filter((p) => packs(pkg, p));
const cache = new Map<string, string | undefined>();
const read = (rel: string): string | undefined => {
  if (!cache.has(rel)) cache.set(rel, fs.existsSync(path.join(ROOT, rel)) ? fs.readFileSync(path.join(ROOT, rel), 'utf8') : undefined);
  return cache.get(rel);
};
const exists = (rel: string): boolean => fs.existsSync(path.join(ROOT, rel));

describe('the links of the docs', () => {
  it('reads README.md, CHANGELOG.md and the pages of docs/', () => {
    expect(pages.length).toBeGreaterThan(20);
    expect(pages.flatMap((p) => linksOf(read(p)!)).length).toBeGreaterThan(200);
  });

  it('resolve: every relative link names a file, every anchor a heading', () => {
    expect(pages.flatMap((p) => brokenLinks(p, read(p)!, read, exists))).toEqual([]);
  });

  it('of a page an npm package ships name only what the package ships (PACKAGE_EXCEPTIONS aside)', () => {
    const root = packages[0];
    expect(shippedPages(root)).toEqual(
      expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/reference/cli.md', 'docs/guides/deployment.md']),
    );
    expect(shippedPages(packages[1])).toEqual(['runtime/README.md']);
    expect(packages.flatMap((pkg) => shippedPages(pkg).flatMap((p) => unpackedLinks(pkg, p, read(p)!)))).toEqual([]);
    // Every exception is still needed: a link it excuses is still there.
    for (const e of PACKAGE_EXCEPTIONS) {
      expect({
        page: e.page,
        excused: linksOf(read(e.page)!).some(({ target }) => e.target.test(target.replace(/^(\.\.\/)+/, ''))),
      }).toEqual({
        page: e.page,
        excused: true,
      });
    }
  });

  it('report a shipped page linking out of its package (the check itself)', () => {
    const page =
      'See [deployment](../guides/deployment.md), [settings](settings.md#environment-variables) and [the tests](../../test/x.test.ts).';
    const referenceOnly: Package = { dir: '', files: ['bin/svcgen', 'docs/reference/'] };
    expect(packs(referenceOnly, 'docs/reference/cli.md')).toBe(true);
    expect(packs(referenceOnly, 'README.md')).toBe(true);
    expect(unpackedLinks(referenceOnly, 'docs/reference/errors.md', page)).toEqual([
      'docs/reference/errors.md:1: ../guides/deployment.md: docs/guides/deployment.md is not in the package .',
      'docs/reference/errors.md:1: ../../test/x.test.ts: test/x.test.ts is not in the package .',
    ]);
    expect(unpackedLinks({ dir: '', files: ['docs/', '!docs/guides/'] }, 'docs/reference/errors.md', page)).toHaveLength(2);
    expect(unpackedLinks({ dir: '', files: ['docs/'] }, 'docs/reference/errors.md', page)).toHaveLength(1);
    expect(packs({ dir: 'runtime', files: ['dist/'] }, 'runtime/dist/index.js')).toBe(true);
    expect(packs({ dir: 'runtime', files: ['dist/'] }, 'docs/README.md')).toBe(false);
  });

  it('spell anchors as GitHub does', () => {
    expect(slugOf('What `svcgen validate` checks')).toBe('what-svcgen-validate-checks');
    expect(slugOf('Retries: Idempotency-Key')).toBe('retries-idempotency-key');
    expect(slugOf('Unknown body keys: `extra_fields`')).toBe('unknown-body-keys-extra_fields');
    expect(slugOf('Expanding relations: `?expand=`')).toBe('expanding-relations-expand');
    expect([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n')]).toEqual(['a', 'notes', 'notes-1']);
  });

  it('reports a stale link: a page gone, a heading renamed, a link inside code left alone', () => {
    const probe = [
      'See [the old spec language](../spec-language.md#nested-writes) and [settings](reference/settings.md#no-such-heading).',
      'Fine: [settings](reference/settings.md#environment-variables), [here](#a-heading), [web](https://example.com/x.md).',
      '`[not a link](nowhere.md)`',
      '## A heading',
    ].join('\n');
    expect(brokenLinks('docs/probe.md', probe, read, exists)).toEqual([
      'docs/probe.md:1: ../spec-language.md#nested-writes: no file spec-language.md',
      'docs/probe.md:1: reference/settings.md#no-such-heading: no heading #no-such-heading in docs/reference/settings.md',
    ]);
  });
});
