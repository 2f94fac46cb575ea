/**
 * Credentials for the interop daemons.
 *
 * - `htpasswdLine`: an Apache-MD5 ("$apr1$") entry for squid's basic_ncsa_auth,
 *   made by `openssl passwd -apr1` (package openssl).
 * - `ensureSystemUser` / `removeSystemUser`: dante's `username` method checks
 *   RFC 1929 credentials against the system password file, so the test needs
 *   a real (login-less, home-less) system user with a known password, marked
 *   by its GECOS comment so only that user is ever changed or deleted, and
 *   named for the run (`testUserName`) so concurrent runs do not share it. Root
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

/** GECOS marker of the users this suite creates, so only such a user is ever changed or deleted. */
export const TEST_USER_COMMENT = 'proxycheck interop test user';

/**
 * A system user name for this run only ("pci" + our pid + 6 random hex
 * digits, lower case, <= 32 characters as useradd wants): two runs at once
 * never set each other's password or delete each other's user.
 */
export function testUserName(): string {
  return `pci${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
}

/** The passwd entry's GECOS field, or null when the user does not exist. */
function userComment(name: string): string | null {
  const getent = findBinary('getent');
  if (getent === null) throw new CredentialSetupError('getent not found');
  const r = spawnSync(getent, ['passwd', name], { encoding: 'utf8', timeout: 5_000 });
  if (r.status !== 0) return null;
  return r.stdout.trim().split(':')[4] ?? '';
}

/** Creates the (login-less, home-less) user if absent and sets its password. */
export function ensureSystemUser(name: string, password: string): void {
  const comment = userComment(name);
  if (comment === null) {
    run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '--comment', TEST_USER_COMMENT, name]);
  } else if (comment !== TEST_USER_COMMENT) {
    throw new CredentialSetupError(`system user ${name} exists and is not this suite's test user; not touching it`);
  }
  run('chpasswd', [], `${name}:${password}\n`);
}

/** Deletes the user only if this suite created it (GECOS marker). */
export function removeSystemUser(name: string): void {
  if (userComment(name) === TEST_USER_COMMENT) run('userdel', [name]);
}
