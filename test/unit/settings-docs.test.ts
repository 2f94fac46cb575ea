/**
 * The catalogue of settings (src/settings-catalogue.ts) is the one list:
 * docs/OPERATIONS.md "Configuration" holds exactly its tables (the five you
 * set, then tuning by group, each with its default: scripts/settings-table.ts
 * renders them), no other variable is documented as a setting, the service
 * reads no environment variable that is not in it, and `--help` lists every
 * row.
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { settingsMarkdown } from '../../scripts/settings-table';
import { helpRequest, helpText, versionText } from '../../src/help';
import { SETTING_NAMES, SETTINGS } from '../../src/settings-catalogue';
import { VERSION } from '../../src/version';

const ROOT = join(import.meta.dir, '../..');

function configurationSection(): string {
  const text = readFileSync(join(ROOT, 'docs/OPERATIONS.md'), 'utf8');
  const start = text.indexOf('\n## Configuration\n');
  expect(start).toBeGreaterThan(-1);
  const end = text.indexOf('\n## ', start + 5);
  return text.slice(start, end === -1 ? undefined : end);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('docs/OPERATIONS.md lists exactly the settings the code reads', () => {
  test('its tables are the catalogue rendered (names, tiers, groups, defaults, meanings)', () => {
    expect(configurationSection()).toContain(settingsMarkdown());
  });

  test('no other variable is documented as a setting there', () => {
    const documented = [...configurationSection().matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...SETTING_NAMES].sort());
  });

  test('the service reads no environment variable outside the catalogue', () => {
    // the command-line tools (src/cli/**, the admin command) read their own variables
    const own = (f: string) => f.startsWith('src/cli/') || f === 'src/admin/cli.ts';
    const read = new Map<string, string>();
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      const rel = relative(ROOT, file);
      if (own(rel)) continue;
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)|process\.env\[['"]([A-Z][A-Z0-9_]+)['"]\]|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) {
        read.set((m[1] ?? m[2] ?? m[3])!, rel);
      }
    }
    for (const [name, file] of read) expect(SETTING_NAMES, `${name} read by ${file}`).toContain(name as never);
    // and a row read elsewhere than src/config.ts names the module that reads it
    for (const n of SETTING_NAMES) {
      const by = SETTINGS[n].readBy;
      if (by !== undefined) expect(readFileSync(join(ROOT, by), 'utf8')).toContain(n);
    }
  });
});

describe('--help and --version', () => {
  test('what the command line asks for', () => {
    expect(helpRequest([])).toBeNull();
    expect(helpRequest(['--help'])).toBe('help');
    expect(helpRequest(['-h'])).toBe('help');
    expect(helpRequest(['--version'])).toBe('version');
    expect(versionText()).toBe(`proxycheck-service ${VERSION}\n`);
  });

  test('every setting with its default, the five you set first', () => {
    const text = helpText();
    for (const n of SETTING_NAMES) expect(text).toContain(`  ${n} `);
    const five = text.indexOf('The five you set:');
    const tuning = text.indexOf('Tuning:');
    expect(five).toBeGreaterThan(-1);
    expect(tuning).toBeGreaterThan(five);
    for (const n of SETTING_NAMES.filter((x) => SETTINGS[x].tier === 'set')) {
      const at = text.indexOf(`  ${n} `);
      expect(at > five && at < tuning, n).toBe(true);
      expect(text).toContain(`(default: ${SETTINGS[n].shown})`);
    }
  });
});
