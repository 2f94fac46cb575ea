/**
 * What `bun src/main.ts --help` and `--version` print instead of starting:
 * the settings from the catalogue (src/settings-catalogue.ts), the five a
 * person sets first, then the tuning ones by group, each with its default.
 * Pure: the process writes the text.
 */
import { SETTING_GROUPS, SETTING_NAMES, SETTINGS, type SettingName } from './settings-catalogue';
import { VERSION } from './version';

/** What the command line asks for instead of a start, or null: start. */
export function helpRequest(argv: readonly string[]): 'help' | 'version' | null {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  if (argv.includes('--version')) return 'version';
  return null;
}

export function versionText(): string {
  return `proxycheck-service ${VERSION}\n`;
}

function rows(names: readonly SettingName[]): string[] {
  const width = Math.max(...names.map((n) => n.length));
  return names.map((n) => `  ${n.padEnd(width)}  ${SETTINGS[n].meaning} (default: ${SETTINGS[n].shown})`);
}

export function helpText(): string {
  const out = [
    `proxycheck-service ${VERSION}: a proxy-checking API (ClearProxy-compatible).`,
    '',
    'Usage: bun src/main.ts            start (npm start does the same)',
    '       bun src/main.ts --help     this text',
    '       bun src/main.ts --version  the version',
    '',
    'Settings are environment variables (a .env file in the working directory is read too).',
    '',
    'The five you set:',
    ...rows(SETTING_NAMES.filter((n) => SETTINGS[n].tier === 'set')),
  ];
  for (const { group, title } of SETTING_GROUPS) {
    const names = SETTING_NAMES.filter((n) => SETTINGS[n].tier === 'tuning' && SETTINGS[n].group === group);
    if (names.length > 0) out.push('', `Tuning: ${title.toLowerCase()}:`, ...rows(names));
  }
  out.push('', 'Every setting, with more on each: docs/OPERATIONS.md "Configuration".', '');
  return out.join('\n');
}
