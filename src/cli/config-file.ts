/**
 * Where the CLI's key and base URL come from, and its config file.
 *
 * Precedence, highest first: --key / --url, then PROXYCHECK_API_KEY /
 * PROXYCHECK_URL, then the config file, then (URL only) the default
 * http://127.0.0.1:3000. The file is `$XDG_CONFIG_HOME/proxycheck/config.json`,
 * or `~/.config/proxycheck/config.json` when XDG_CONFIG_HOME is unset or not
 * absolute (XDG Base Directory spec); it holds `{"url": ..., "key": ...}`,
 * written by `proxycheck login` with mode 0600 in a 0700 directory.
 *
 * `configPath` and `resolveSettings` are pure; `readConfigFile` and
 * `writeConfigFile` do the file I/O.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { errorText } from '../errors';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { CliError, EXIT, usageError } from './exit-codes';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface StoredConfig {
  url?: string;
  key?: string;
}

export type SettingSource = 'flag' | 'env' | 'config' | 'default' | 'none';

export interface CliSettings {
  /** Base URL without a trailing slash. */
  url: string;
  key: string | undefined;
  urlSource: SettingSource;
  keySource: SettingSource;
}

/** The config file's path for this environment. */
export function configPath(env: Record<string, string | undefined>, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(home, '.config');
  return join(base, 'proxycheck', 'config.json');
}

/** "http(s)://host[:port][/path]" without trailing slashes; a usage error otherwise. */
export function normaliseBaseUrl(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw usageError(`${from}: "${raw}" is not a URL (expected e.g. ${DEFAULT_URL})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`${from}: the URL must be http or https, not ${u.protocol}`);
  if (u.search !== '' || u.hash !== '') throw usageError(`${from}: the URL must not carry a query or fragment`);
  return u.toString().replace(/\/+$/, '');
}

export function resolveSettings(
  flags: { key?: string; url?: string },
  env: Record<string, string | undefined>,
  file: StoredConfig | null,
): CliSettings {
  const nonEmpty = (s: string | undefined) => (s !== undefined && s.trim() !== '' ? s.trim() : undefined);
  let url = DEFAULT_URL;
  let urlSource: SettingSource = 'default';
  if (nonEmpty(flags.url) !== undefined) [url, urlSource] = [normaliseBaseUrl(flags.url!, '--url'), 'flag'];
  else if (nonEmpty(env.PROXYCHECK_URL) !== undefined) [url, urlSource] = [normaliseBaseUrl(env.PROXYCHECK_URL!, 'PROXYCHECK_URL'), 'env'];
  else if (nonEmpty(file?.url) !== undefined) [url, urlSource] = [normaliseBaseUrl(file!.url!, 'config file url'), 'config'];
  let key: string | undefined;
  let keySource: SettingSource = 'none';
  if (nonEmpty(flags.key) !== undefined) [key, keySource] = [nonEmpty(flags.key), 'flag'];
  else if (nonEmpty(env.PROXYCHECK_API_KEY) !== undefined) [key, keySource] = [nonEmpty(env.PROXYCHECK_API_KEY), 'env'];
  else if (nonEmpty(file?.key) !== undefined) [key, keySource] = [nonEmpty(file?.key), 'config'];
  return { url, key, urlSource, keySource };
}

/** The stored config, or null when there is no file. A broken file is a usage error naming it. */
export async function readConfigFile(path: string): Promise<StoredConfig | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_CONFIG_UNREADABLE, `cannot read the config file ${path}: ${errorText(err)}`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_CONFIG_INVALID, `the config file ${path} is not valid JSON; fix it or run \`proxycheck login\` again`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_CONFIG_INVALID, `the config file ${path} must hold a JSON object {"url", "key"}`);
  }
  const v = value as Record<string, unknown>;
  const out: StoredConfig = {};
  if (typeof v.url === 'string') out.url = v.url;
  if (typeof v.key === 'string') out.key = v.key;
  return out;
}

/** Writes the file atomically: directory 0700, file 0600 (also when it existed before). */
export async function writeConfigFile(path: string, config: StoredConfig): Promise<void> {
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, path);
  } catch (err) {
    throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_CONFIG_UNWRITABLE, `cannot write the config file ${path}: ${errorText(err)}`, { cause: err });
  }
}
