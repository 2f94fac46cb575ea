import { describe, expect, test } from 'bun:test';
import { KeyCache } from '../../src/accounts/key-cache';

describe('KeyCache', () => {
  test('a hit within the TTL does not load again; after it, it does', async () => {
    let t = 0;
    const c = new KeyCache<{ id: string }>({ ttlMs: 2000, now: () => t });
    let loads = 0;
    const load = async (k: string) => (loads++, k === 'good' ? { id: 'a' } : null);
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    t = 1999;
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    expect(loads).toBe(1);
    t = 2000;
    await c.get('good', load);
    expect(loads).toBe(2);
  });

  test('misses are cached too, and clear() forgets everything', async () => {
    const c = new KeyCache<{ id: string }>({ now: () => 0 });
    let loads = 0;
    const load = async () => (loads++, null);
    expect(await c.get('bad', load)).toBeNull();
    expect(await c.get('bad', load)).toBeNull();
    expect(loads).toBe(1);
    c.clear();
    expect(c.size).toBe(0);
    await c.get('bad', load);
    expect(loads).toBe(2);
  });

  test('bounded: it never holds more than maxEntries', async () => {
    const c = new KeyCache<number>({ maxEntries: 3, now: () => 0 });
    for (let i = 0; i < 10; i++) await c.get(`k${i}`, async () => i);
    expect(c.size).toBeLessThanOrEqual(3);
  });
});
