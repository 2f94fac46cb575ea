/**
 * Fills the secrets that may be absent from the environment: RESULT_SECRET
 * (signs result links) and ADMIN_TOKEN (guards the admin HTTP API). Each is
 * read from `${dataDir}/result-secret` / `${dataDir}/admin-token`, or
 * generated (32 random bytes, base64url) and written there with mode 0600.
 * Creation is atomic (temp file + hard link, which fails if the file exists),
 * so two processes starting at once end up with the same secret.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config';
import { errorText, ServiceError } from './errors';
import { LEAF_ERROR_CODES } from './error-codes';

const MIN_LENGTH = 16;

function readSecret(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ServiceError(LEAF_ERROR_CODES.SECRET_UNREADABLE, `cannot read ${path}: ${errorText(err)}`, { cause: err });
  }
  const value = text.trim();
  if (value.length < MIN_LENGTH) throw new ServiceError(LEAF_ERROR_CODES.SECRET_UNREADABLE, `${path} must hold at least ${MIN_LENGTH} characters; delete it to regenerate`);
  return value;
}

/** Reads the secret at `${dataDir}/${name}`, creating it (0600) when absent. */
export function readOrCreateSecret(dataDir: string, name: string): string {
  const path = join(dataDir, name);
  const existing = readSecret(path);
  if (existing !== undefined) return existing;
  mkdirSync(dataDir, { recursive: true });
  writeFileOnce(path, randomBytes(32).toString('base64url') + '\n');
  const stored = readSecret(path);
  if (stored === undefined) throw new ServiceError(LEAF_ERROR_CODES.SECRET_UNREADABLE, `${path} vanished while being created`);
  return stored;
}

/**
 * Creates `path` (mode 0600) holding `content`, atomically: a temp file
 * hard-linked into place, which fails when the file exists. When another
 * process created it first, its content stays (the caller reads it back).
 */
export function writeFileOnce(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ServiceError(LEAF_ERROR_CODES.SECRET_UNREADABLE, `cannot write ${path}: ${errorText(err)}`, { cause: err });
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

export async function resolveSecrets(config: Config): Promise<Config> {
  const { dataDir } = config.storage;
  return {
    ...config,
    storage: { ...config.storage, resultSecret: config.storage.resultSecret ?? readOrCreateSecret(dataDir, 'result-secret') },
    http: { ...config.http, adminToken: config.http.adminToken ?? readOrCreateSecret(dataDir, 'admin-token') },
  };
}
