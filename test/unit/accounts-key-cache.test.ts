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

  test('LRU: a hit stays, the least recently used goes first', async () => {
    const c = new KeyCache<number>({ maxEntries: 2, now: () => 0 });
    let loads = 0;
    const load = async (k: string) => (loads++, Number(k.slice(1)));
    await c.get('k1', load);
    await c.get('k2', load);
    await c.get('k1', load); // k1 is now the most recent
    await c.get('k3', load); // evicts k2
    expect(loads).toBe(3);
    await c.get('k1', load);
    expect(loads).toBe(3);
    await c.get('k2', load);
    expect(loads).toBe(4);
  });

  test('a flood of random unknown keys never evicts a good key', async () => {
    const c = new KeyCache<{ id: string }>({ maxEntries: 100, now: () => 0 });
    let goodLoads = 0;
    const load = async (k: string) => (k === 'good' ? (goodLoads++, { id: 'a' }) : null);
    await c.get('good', load);
    for (let i = 0; i < 5_000; i++) await c.get(`random-${i}`, load);
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    expect(goodLoads).toBe(1);
    expect(c.size).toBeLessThanOrEqual(200);
  });

  test('concurrent look-ups of one key share one query', async () => {
    const c = new KeyCache<{ id: string }>({ now: () => 0 });
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return { id: 'a' };
    };
    const all = Promise.all(Array.from({ length: 50 }, () => c.get('same', load)));
    release();
    const out = await all;
    expect(loads).toBe(1);
    expect(out.every((a) => a?.id === 'a')).toBe(true);
  });

  test('a look-up in flight when the key is revoked (clear) cannot bring the account back', async () => {
    const c = new KeyCache<{ id: string }>({ now: () => 0 });
    let revoked = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // the first query reads the key before the revoke commits, and answers after it
    const slow = async () => {
      await gate;
      return { id: 'a' };
    };
    const racing = c.get('k', slow);
    revoked = true;
    c.clear(); // the admin command's revoke
    const fresh = async () => (revoked ? null : { id: 'a' });
    const after = c.get('k', fresh); // a request after the revoke does not join the old query
    release();
    expect(await racing).toEqual({ id: 'a' }); // it started before the revoke
    expect(await after).toBeNull();
    expect(await c.get('k', fresh)).toBeNull(); // and the old answer was not stored
  });

  test('a failed look-up is not cached and does not block the next one', async () => {
    const c = new KeyCache<{ id: string }>({ now: () => 0 });
    await expect(c.get('k', async () => { throw new Error('db down'); })).rejects.toThrow('db down');
    expect(await c.get('k', async () => ({ id: 'a' }))).toEqual({ id: 'a' });
  });
});
