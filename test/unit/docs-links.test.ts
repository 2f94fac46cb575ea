/**
 * The documentation's links hold: every relative link in README.md and
 * docs/*.md points at a file of the repository, and every #anchor at a
 * heading of the file it names (GitHub's slugs: lower case, punctuation
 * dropped, spaces to hyphens). Moving a section between files breaks a link
 * somewhere; this finds it.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const REPO = resolve(import.meta.dir, '../..');
const FILES = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading's text. Pure. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown text's headings (outside code fences). Pure. */
function anchors(md: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of md.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(slug(m[1]!));
  }
  return out;
}

/** `[text](target)` links outside code fences, with their line numbers. Pure. */
function links(md: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fenced = false;
  md.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

describe('slug and anchors (pure)', () => {
  test("GitHub's slugs", () => {
    expect(slug('Runtime settings: memory and JIT')).toBe('runtime-settings-memory-and-jit');
    expect(slug('GET /metrics (the admin listener)')).toBe('get-metrics-the-admin-listener');
    expect(slug('Trying it on one machine: `npm run cluster:demo`')).toBe('trying-it-on-one-machine-npm-run-clusterdemo');
    expect(slug('type auto')).toBe('type-auto');
  });
  test('headings inside code fences are not anchors', () => {
    expect([...anchors('# A\n```\n# not a heading\n```\n## B c\n')]).toEqual(['a', 'b-c']);
  });
  test('links skip code spans and fences', () => {
    expect(links('see [x](a.md) and `[y](b.md)`\n```\n[z](c.md)\n```\n[w](d.md#e)')).toEqual([
      { line: 1, target: 'a.md' },
      { line: 5, target: 'd.md#e' },
    ]);
  });
});

describe('README.md and docs/*.md', () => {
  test('every relative link points at a file, and every anchor at a heading', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const md = readFileSync(join(REPO, file), 'utf8');
      for (const { line, target } of links(md)) {
        if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const abs = path === '' ? join(REPO, file) : resolve(REPO, dirname(file), path);
        const where = `${file}:${line} -> ${target}`;
        if (!abs.startsWith(REPO) || !existsSync(abs)) {
          broken.push(`${where}: no file ${relative(REPO, abs)}`);
          continue;
        }
        if (anchor !== undefined && abs.endsWith('.md') && !anchors(readFileSync(abs, 'utf8')).has(anchor)) {
          broken.push(`${where}: no heading with that anchor`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
