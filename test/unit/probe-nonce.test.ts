/** Nonces: 32 hex characters, no repeats across many draws (pool refills included). */
import { expect, test } from 'bun:test';
import { newNonce } from '../../src/probe/codec/nonce';

test('nonces are 128-bit hex and unique', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const n = newNonce();
    expect(n).toMatch(/^[0-9a-f]{32}$/);
    seen.add(n);
  }
  expect(seen.size).toBe(5000);
});
