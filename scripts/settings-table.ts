/**
 * The settings tables of docs/OPERATIONS.md "Configuration", rendered from
 * the catalogue (src/settings-catalogue.ts): "The five you set", then
 * "Tuning" by group, each row with its default. test/unit/settings-docs.test.ts
 * checks the docs hold exactly this text, so after a change to the catalogue:
 *
 *   bun scripts/settings-table.ts   (paste it over the tables)
 */
import { SETTING_GROUPS, SETTING_NAMES, SETTINGS, type SettingName } from '../src/settings-catalogue';

const cell = (s: string) => s.replace(/\|/g, '\\|');

function table(names: readonly SettingName[]): string[] {
  return ['| variable | default | meaning |', '|---|---|---|', ...names.map((n) => `| \`${n}\` | ${cell(SETTINGS[n].shown)} | ${cell(SETTINGS[n].meaning)} |`)];
}

/** The markdown, from "### The five you set" to the last tuning table. */
export function settingsMarkdown(): string {
  const out = ['### The five you set', '', ...table(SETTING_NAMES.filter((n) => SETTINGS[n].tier === 'set')), '', '### Tuning', ''];
  out.push('Each has a default that works; change one when the sections below say why.');
  for (const { group, title } of SETTING_GROUPS) {
    const names = SETTING_NAMES.filter((n) => SETTINGS[n].tier === 'tuning' && SETTINGS[n].group === group);
    if (names.length > 0) out.push('', `#### ${title}`, '', ...table(names));
  }
  return out.join('\n') + '\n';
}

if (import.meta.main) process.stdout.write(settingsMarkdown());
