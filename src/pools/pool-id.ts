/**
 * A pool's id (DECISIONS "Pools": 10..32 characters of [a-z0-9]): the rule,
 * and a new id made from random bytes the caller draws (crypto.getRandomValues
 * in the service, fixed bytes in tests). Pure. The gateway's username grammar
 * (src/gateway/codec/username.ts) uses the same rule.
 */

export const POOL_ID_PATTERN = '^[a-z0-9]{10,32}$';
export const POOL_ID = new RegExp(POOL_ID_PATTERN);
/** Characters of a new id: 20 of 36 symbols, about 103 bits. */
export const NEW_POOL_ID_LENGTH = 20;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function isPoolId(value: string): boolean {
  return POOL_ID.test(value);
}

/**
 * A new id from `random` (at least NEW_POOL_ID_LENGTH bytes). Bytes of 252
 * and above are skipped (252 = 7 x 36), so every symbol is equally likely;
 * RangeError when too few usable bytes are left (ask for twice as many).
 */
export function newPoolId(random: Uint8Array): string {
  let id = '';
  for (let i = 0; i < random.length && id.length < NEW_POOL_ID_LENGTH; i++) {
    const b = random[i] as number;
    if (b < 252) id += ALPHABET[b % 36];
  }
  if (id.length < NEW_POOL_ID_LENGTH) throw new RangeError(`newPoolId: not enough random bytes (${random.length})`);
  return id;
}
