/**
 * The tables of stable error codes (src/error-codes.ts): one casing, each code
 * defined once, every code thrown somewhere, and no code written inline where
 * an error is made (a new literal fails here, not in review).
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ERROR_CODE_TABLES } from '../../src/error-codes';

const ROOT = join(import.meta.dir, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' || name === 'migrations' ? [] : sources(p);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

const files = ['src', 'workers', 'db'].flatMap((d) => sources(join(ROOT, d))).filter((f) => !f.endsWith(join('src', 'error-codes.ts')));
const text = new Map(files.map((f) => [relative(ROOT, f), readFileSync(f, 'utf8')]));
const entries = Object.entries(ERROR_CODE_TABLES).flatMap(([layer, table]) => Object.entries(table).map(([key, code]) => ({ layer, key, code: code as string })));

describe('error code tables', () => {
  test('a code is snake_case and its key is the code in capitals', () => {
    for (const { key, code } of entries) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      expect(key).toBe(code.toUpperCase());
    }
  });

  test('no code is defined twice (in one table or across layers)', () => {
    const seen = new Map<string, string>();
    for (const { layer, code } of entries) {
      expect(seen.get(code) ?? null, `${code} in ${layer} and ${seen.get(code)}`).toBeNull();
      seen.set(code, layer);
    }
  });

  test('every code is used by the code of its layer (no dead entries)', () => {
    const all = [...text.values()].join('\n');
    const TABLE = { db: 'DB', leaves: 'LEAF', domain: 'DOMAIN', jobs: 'JOB', http: 'HTTP', entry: 'ENTRY' } as const;
    for (const { layer, key } of entries) {
      const ref = `${TABLE[layer as keyof typeof TABLE]}_ERROR_CODES.${key}`;
      expect(all.includes(ref), `${ref} is never used`).toBe(true);
    }
  });

  test('no error is made with an inline code literal, and no code compared as one', () => {
    const MADE = /new (?:ServiceError|CliError|CliFailure|AccountError)\(\s*(?:EXIT\.[A-Z_]+,\s*)?'[a-z_]+'|super\(\s*'[a-z_]+'/;
    // comparisons also meet the probe's outcome codes (data, src/probe/types.ts): only the tables' codes count there
    const codes = new Set(entries.map((e) => e.code));
    const COMPARED = /(?:\.code === |isServiceError\([^,()]+,\s*)'([a-z_]+)'/g;
    const offenders = [...text.entries()].flatMap(([file, src]) =>
      src
        .split('\n')
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        .filter(({ line }) => MADE.test(line) || [...line.matchAll(COMPARED)].some((m) => codes.has(m[1]!))),
    );
    expect(offenders).toEqual([]);
  });

  test('the scan finds an inline literal where there is one', () => {
    const INLINE = /new (?:ServiceError|CliError|CliFailure|AccountError)\(\s*(?:EXIT\.[A-Z_]+,\s*)?'[a-z_]+'/;
    expect(INLINE.test(`throw new ServiceError('shard_failed', 'x')`)).toBe(true);
    expect(INLINE.test(`throw new CliError(EXIT.USAGE, 'cli_usage', 'x')`)).toBe(true);
    expect(INLINE.test(`throw new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'x')`)).toBe(false);
  });
});
