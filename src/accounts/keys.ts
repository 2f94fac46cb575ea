/**
 * API keys: `pc_` + 32 random base62 characters (~190 bits), shown once and
 * stored only as their sha256 hex digest. Pure apart from the random source.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'pc_';
export const KEY_RANDOM_LENGTH = 32;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A fresh key. Rejection sampling keeps every character uniform. */
export function generateApiKey(random: (n: number) => Uint8Array = randomBytes): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + KEY_RANDOM_LENGTH) {
    for (const b of random(48)) {
      if (b >= 248) continue; // 248 = 62 * 4: keep the modulo unbiased
      out += ALPHABET[b % 62];
      if (out.length === KEY_PREFIX.length + KEY_RANDOM_LENGTH) break;
    }
  }
  return out;
}

/** sha256 hex of the key: what the database stores and looks up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when `key` looks like something we could have issued or accepted (cheap pre-check before a lookup). */
export function isPlausibleApiKey(key: string): boolean {
  return key.length >= 16 && key.length <= 200 && /^[\x21-\x7e]+$/.test(key);
}

/** Constant-time comparison of two hex digests (or any two strings, via their sha256). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
