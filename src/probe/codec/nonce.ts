/**
 * Per-probe random nonces: 128 bits from the CSPRNG as 32 lower-case hex
 * characters (safe in a query string and in JSON without escaping). Random
 * bytes are drawn in blocks to keep the per-probe cost to one hex encode.
 */
import { randomFillSync } from 'node:crypto';

const NONCE_BYTES = 16;
const POOL = Buffer.alloc(NONCE_BYTES * 256);
let offset = POOL.length;

export function newNonce(): string {
  if (offset + NONCE_BYTES > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const s = POOL.toString('hex', offset, offset + NONCE_BYTES);
  offset += NONCE_BYTES;
  return s;
}
