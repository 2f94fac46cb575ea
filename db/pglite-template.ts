/**
 * The template a new embedded data dir starts from instead of initdb.
 *
 * PGlite's initdb runs in a second WASM instance and hands its data dir over
 * as a tarball: slow, and the peak of a service's first start on an empty
 * DATA_DIR. A tarball of that same initdb output (made once, with the
 * service's PGLITE_SETTINGS, no migrations: those run at every open as
 * always) loads in a fraction of the time and memory (bench/RESULTS.md,
 * "First start on an empty data dir").
 *
 * The tarball is built at install time (npm's postinstall runs
 * scripts/pglite-template.ts) into node_modules/.cache/proxycheck-pglite/,
 * named for the installed PGlite version and the settings, so an upgrade or a
 * settings change simply misses it. Without it (`--ignore-scripts`, another
 * version) the service runs initdb as before. readTemplate hands PGlite only
 * a tarball that inflates and holds a data dir (a failed PGlite start cannot
 * be retried cleanly: it leaves an unhandled rejection behind); anything else
 * counts as no template. Deleting the cache directory forces initdb.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { makePgliteTemplate, PGLITE_SETTINGS } from './client';

const ROOT = resolve(import.meta.dir, '..');

/** The installed @electric-sql/pglite version, or null when it cannot be read. */
export function pgliteVersion(root: string = ROOT): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : null;
  } catch {
    return null;
  }
}

/** Pure: the file name for a PGlite version and settings (a change in either is a different file). */
export function templateFileName(version: string, settings: Readonly<Record<string, string>>): string {
  const h = createHash('sha256').update(JSON.stringify(Object.entries(settings).sort())).digest('hex').slice(0, 12);
  return `pglite-${version.replace(/[^0-9A-Za-z.-]/g, '_')}-initdb-${h}.tar.gz`;
}

/** Where this install keeps its template, or null when the PGlite version is unknown. */
export function templateFile(root: string = ROOT): string | null {
  const v = pgliteVersion(root);
  return v === null ? null : join(root, 'node_modules', '.cache', 'proxycheck-pglite', templateFileName(v, PGLITE_SETTINGS));
}

/**
 * Pure: the tar inflated from a gzipped template when it holds a PostgreSQL
 * data dir (a ustar archive with a PG_VERSION member), else null.
 */
export function checkTemplate(gz: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> | null {
  let tar: Uint8Array<ArrayBuffer>;
  try {
    tar = Bun.gunzipSync(gz);
  } catch {
    return null;
  }
  if (tar.length < 1024 || new TextDecoder().decode(tar.subarray(257, 262)) !== 'ustar') return null;
  // member names sit at the start of each 512-byte header
  for (let off = 0; off + 512 <= tar.length; ) {
    const name = new TextDecoder().decode(tar.subarray(off, off + 100)).replace(/\0.*$/s, '');
    if (name === '') return null; // end of archive
    if (name === 'PG_VERSION' || name.endsWith('/PG_VERSION')) return tar;
    const size = Number.parseInt(new TextDecoder().decode(tar.subarray(off + 124, off + 136)).replace(/\0.*$/s, '').trim() || '0', 8);
    if (!Number.isFinite(size) || size < 0) return null;
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return null;
}

/** The template for openDatabase's pgliteTemplate, or undefined when there is none or it is unusable (checkTemplate). */
export function readTemplate(file: string | null = templateFile()): Blob | undefined {
  if (file === null || !existsSync(file) || statSync(file).size === 0) return undefined;
  const gz = readFileSync(file);
  // the gzipped bytes go to PGlite (it inflates them itself): the checked tar is only garbage
  return checkTemplate(gz) === null ? undefined : new Blob([gz]);
}

/** Builds the template unless it exists. Written to a temporary name and renamed: never half a file. */
export async function ensureTemplate(file: string | null = templateFile()): Promise<{ file: string | null; built: boolean; bytes: number }> {
  if (file === null) return { file, built: false, bytes: 0 };
  if (existsSync(file) && statSync(file).size > 0) return { file, built: false, bytes: statSync(file).size };
  const tarball = new Uint8Array(await (await makePgliteTemplate({ migrate: false, gzip: true })).arrayBuffer());
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, tarball);
  renameSync(tmp, file);
  return { file, built: true, bytes: tarball.length };
}
