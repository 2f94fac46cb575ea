/**
 * The service's secrets: RESULT_SECRET and ADMIN_TOKEN from the environment,
 * or generated into DATA_DIR once (src/secrets.ts). A cluster's API nodes
 * must have them in their environment (the cluster backend refuses to start
 * otherwise: generated per DATA_DIR they would differ per node).
 */
import { mkdirSync } from 'node:fs';
import type { Config } from '../config';
import { HTTP_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';
import { resolveSecrets } from '../secrets';

export async function serviceSecrets(raw: Config): Promise<{ config: Config; secret: string }> {
  mkdirSync(raw.storage.dataDir, { recursive: true });
  const config = await resolveSecrets(raw);
  const secret = config.storage.resultSecret;
  if (secret === undefined || secret === '') {
    throw new ServiceError(HTTP_ERROR_CODES.RESULT_SECRET_MISSING, 'no result-link secret (RESULT_SECRET or DATA_DIR/result-secret, src/secrets.ts)');
  }
  return { config, secret };
}
