/**
 * Credentials for the interop daemons.
 *
 * - `htpasswdLine`: an Apache-MD5 ("$apr1$") entry for squid's basic_ncsa_auth,
 *   made by `openssl passwd -apr1` (package openssl).
 * - `ensureSystemUser` / `removeSystemUser`: dante's `username` method checks
 *   RFC 1929 credentials against the system password file, so the test needs
 *   a real (login-less, home-less) system user with a known password. Root
 *   only; `useradd`, `chpasswd`, `userdel` from Debian's passwd package.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { findBinary } from './daemons';

export class CredentialSetupError extends Error {
  readonly code = 'credential_setup_failed';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CredentialSetupError';
  }
}

/** A password of [A-Za-z0-9] only (safe in every config syntax above). */
export function randomPassword(): string {
  return randomBytes(12).toString('base64').replace(/[^A-Za-z0-9]/g, 'x');
}

function run(bin: string, args: string[], input?: string): string {
  const path = findBinary(bin);
  if (path === null) throw new CredentialSetupError(`${bin} not found`);
  const r = spawnSync(path, args, { input, encoding: 'utf8', timeout: 10_000 });
  if (r.error !== undefined) throw new CredentialSetupError(`${bin} failed: ${r.error.message}`, { cause: r.error });
  if (r.status !== 0) throw new CredentialSetupError(`${bin} ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

export function htpasswdLine(user: string, password: string): string {
  const hash = run('openssl', ['passwd', '-apr1', '-stdin'], `${password}\n`).trim();
  if (!hash.startsWith('$apr1$')) throw new CredentialSetupError(`unexpected openssl passwd output: ${hash}`);
  return `${user}:${hash}\n`;
}

function userExists(name: string): boolean {
  const getent = findBinary('getent');
  if (getent === null) return false;
  return spawnSync(getent, ['passwd', name], { encoding: 'utf8', timeout: 5_000 }).status === 0;
}

/** Creates the user if absent and sets its password; returns true when it created it. */
export function ensureSystemUser(name: string, password: string): boolean {
  const created = !userExists(name);
  if (created) run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  run('chpasswd', [], `${name}:${password}\n`);
  return created;
}

export function removeSystemUser(name: string): void {
  if (userExists(name)) run('userdel', [name]);
}
