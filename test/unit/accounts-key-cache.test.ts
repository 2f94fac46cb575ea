import { describe, expect, test } from 'bun:test';
import { KeyCache } from '../../src/accounts/key-cache';

describe('KeyCache', () => {
  test('a hit within the TTL does not load again; after it, it does', async () => {
    let t = 0;
    const c = new KeyCache<{ id: string }>({ ttlMs: 2000, now: () => t });
    let loads = 0;
    const load = async (k: string) => (loads++, k === 'good' ? { id: 'a' } : null);
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    t = 1000;
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    expect(loads).toBe(1);
    t = 3000;
    await c.get('good', load);
    expect(loads).toBe(2);
  });

  test('refresh ahead: a hit in the second half of its life answers at once and reloads in the background; a revocation it finds takes effect', async () => {
    let t = 0;
    const c = new KeyCache<{ id: string }>({ ttlMs: 2000, now: () => t });
    let revoked = false;
    let release: () => void = () => {};
    let loads = 0;
    const load = (k: string) => {
      loads++;
      if (loads === 1) return Promise.resolve(k === 'good' ? { id: 'a' } : null);
      return new Promise<{ id: string } | null>((resolve) => (release = () => resolve(revoked ? null : { id: 'a' })));
    };
    await c.get('good', load);
    t = 1500;
    // the database is slow (the refresh waits): the hit does not
    let answered = false;
    void c.get('good', load).then(() => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(true);
    expect(loads).toBe(2);
    // one refresh at a time
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    expect(loads).toBe(2);
    release();
    await Bun.sleep(0);
    // the refresh's answer lives a whole TTL from its end (past the first answer's): no load until its second half
    t = 2400;
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    expect(loads).toBe(2);
    // the next refresh finds the key revoked: the hit that started it still had the entry, the next one sees the revocation
    t = 3000;
    revoked = true;
    expect(await c.get('good', load)).toEqual({ id: 'a' });
    release();
    await Bun.sleep(0);
    expect(await c.get('good', load)).toBeNull();
    expect(loads).toBe(3);
  });

  test('refresh ahead never serves an expired entry: past the TTL the request waits for the look-up', async () => {
    let t = 0;
    const c = new KeyCache<{ id: string }>({ ttlMs: 2000, now: () => t });
    let value: { id: string } | null = { id: 'a' };
    await c.get('good', async () => value);
    t = 2000;
    value = null;
    expect(await c.get('good', async () => value)).toBeNull();
  });

  test('a refresh ahead that fails leaves the entry to expire, and is not thrown at the request', async () => {
    let t = 0;
    const c = new KeyCache<{ id: string }>({ ttlMs: 2000, now: () => t });
    await c.get('good', async () => ({ id: 'a' }));
    t = 1500;
    expect(await c.get('good', () => Promise.reject(new Error('database down')))).toEqual({ id: 'a' });
    await Bun.sleep(0);
    t = 1900;
    expect(await c.get('good', async () => ({ id: 'b' }))).toEqual({ id: 'a' });
    await Bun.sleep(0);
    t = 2100;
    expect(await c.get('good', async () => ({ id: 'c' }))).toEqual({ id: 'b' });
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
