/** Tests for src/proxy/dedupe.ts: proxy identity (string key and hash set agree). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { HASH_SEED, hashFinal, hashInt, proxyHash, proxyKey, ProxySet, sameProxy } from '../../src/proxy/dedupe';
import type { ProxyAddress } from '../../src/proxy/types';

describe('identity', () => {
  test('same host, port, user, password', () => {
    const a: ProxyAddress = { host: 'h.io', port: 80, username: 'u', password: 'p' };
    expect(sameProxy(a, { ...a })).toBe(true);
    expect(proxyKey(a)).toBe(proxyKey({ ...a }));
    expect(proxyHash(a)).toBe(proxyHash({ ...a }));
    expect(sameProxy(a, { ...a, password: 'q' })).toBe(false);
    expect(sameProxy(a, { ...a, port: 81 })).toBe(false);
    expect(sameProxy(a, { host: 'h.io', port: 80 })).toBe(false);
  });
  test('missing password equals empty password', () => {
    const a: ProxyAddress = { host: 'h', port: 1, username: 'u' };
    const b: ProxyAddress = { host: 'h', port: 1, username: 'u', password: '' };
    expect(sameProxy(a, b)).toBe(true);
    expect(proxyKey(a)).toBe(proxyKey(b));
    expect(proxyHash(a)).toBe(proxyHash(b));
  });
  test('keys are unambiguous where naive concatenation is not', () => {
    const a: ProxyAddress = { host: 'h', port: 1, username: 'ab', password: 'c' };
    const b: ProxyAddress = { host: 'h', port: 1, username: 'a', password: 'bc' };
    expect(proxyKey(a)).not.toBe(proxyKey(b));
    expect(sameProxy(a, b)).toBe(false);
  });
  test('a proxy\'s own protocol is part of it (DECISIONS "Mixed lists")', () => {
    const a: ProxyAddress = { host: 'h', port: 1 };
    const s5: ProxyAddress = { ...a, protocol: 'socks5' };
    expect(sameProxy(a, s5)).toBe(false);
    expect(sameProxy(s5, { ...a, protocol: 'socks4' })).toBe(false);
    expect(sameProxy(s5, { ...s5 })).toBe(true);
    expect(proxyKey(s5)).toBe('socks5/h 1');
    expect(proxyKey(a)).toBe('h 1');
    expect(proxyHash(s5)).toBe(proxyHash({ ...s5 }));
    expect(proxyHash(s5)).not.toBe(proxyHash(a));
  });
});

const proxyArb: fc.Arbitrary<ProxyAddress> = fc.record(
  {
    host: fc.constantFrom('a', 'b', '1.2.3.4', '::1'),
    port: fc.integer({ min: 1, max: 3 }),
    username: fc.constantFrom('u', 'v', 'uv'),
    password: fc.constantFrom('', 'p', 'vp'),
    protocol: fc.constantFrom('http' as const, 'socks5' as const),
  },
  { requiredKeys: ['host', 'port'] },
);

describe('hash flooding', () => {
  test('a list crafted offline to share one slot under a known seed spreads out under the process seed', () => {
    // 2 048 IPv4 proxies whose hash under FNV-1a's public offset basis all end in the same 12 bits:
    // the slot in a table sized for them (4 096 slots), so every insert would walk one run
    const KNOWN = 0x811c9dc5 | 0;
    const crafted: ProxyAddress[] = [];
    for (let v4 = 0x0a000000; crafted.length < 2048; v4++) {
      if ((hashFinal(hashInt(hashInt(KNOWN, v4), 8080)) & 0xfff) === 0) {
        crafted.push({ host: `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}`, port: 8080 });
      }
    }
    expect(HASH_SEED).not.toBe(KNOWN);
    const perSlot = new Map<number, number>();
    for (const p of crafted) {
      const slot = proxyHash(p) & 0xfff;
      perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
    }
    // 2 048 keys over 4 096 slots at random: the fullest slot holds a handful (P(> 16) is ~1e-10)
    expect(Math.max(...perSlot.values())).toBeLessThan(16);
    const set = new ProxySet(crafted.length);
    for (const p of crafted) expect(set.add(p)).toBe(true);
    expect(set.size).toBe(2048);
  });
});

describe('ProxySet', () => {
  test('agrees with a Set of proxyKey, keeps first occurrences in order', () => {
    fc.assert(
      fc.property(fc.array(proxyArb, { maxLength: 200 }), (list) => {
        const set = new ProxySet();
        const ref = new Map<string, ProxyAddress>();
        for (const p of list) {
          const k = proxyKey(p);
          expect(set.add(p)).toBe(!ref.has(k));
          if (!ref.has(k)) ref.set(k, p);
        }
        expect(set.size).toBe(ref.size);
        expect(set.values()).toEqual([...ref.values()]);
      }),
      { numRuns: 300 },
    );
  });
  test('IPv4 hosts hash by value; a caller-supplied value gives the same hash', () => {
    const p: ProxyAddress = { host: '10.1.2.3', port: 80 };
    expect(proxyHash(p, 0x0a010203)).toBe(proxyHash(p));
    expect(proxyHash({ host: 'h.io', port: 80 }, -1)).toBe(proxyHash({ host: 'h.io', port: 80 }));
    const set = new ProxySet();
    expect(set.add(p, 0x0a010203)).toBe(true);
    expect(set.add({ ...p })).toBe(false);
    expect(set.add({ host: '10.1.2.3', port: 81 }, 0x0a010203)).toBe(true);
  });

  test('addHashed with proxyHash agrees with add; a size hint changes nothing but the table', () => {
    fc.assert(
      fc.property(fc.array(proxyArb, { maxLength: 100 }), fc.nat(5000), (list, hint) => {
        const a = new ProxySet();
        const b = new ProxySet(hint);
        for (const p of list) expect(b.addHashed(p, proxyHash(p))).toBe(a.add(p));
        expect(b.values()).toEqual(a.values());
      }),
      { numRuns: 200 },
    );
  });

  test('colliding hashes (same slot, same or different tag) are told apart by the fields, across growth', () => {
    const ps = Array.from({ length: 3000 }, (_, i) => ({ host: `h${i}`, port: 1 + (i % 7) }));
    const sameHash = new ProxySet();
    const sameSlot = new ProxySet();
    for (const [i, p] of ps.entries()) {
      expect(sameHash.addHashed(p, 42)).toBe(true);
      expect(sameSlot.addHashed(p, ((i * 0x9e3779b1) << 22) | 5)).toBe(true);
    }
    for (const [i, p] of ps.entries()) {
      expect(sameHash.addHashed({ ...p }, 42)).toBe(false);
      expect(sameSlot.addHashed({ ...p }, ((i * 0x9e3779b1) << 22) | 5)).toBe(false);
    }
    expect(sameHash.size).toBe(3000);
    expect(sameSlot.values()).toEqual(ps);
  });

  test('grows past its initial table', () => {
    const set = new ProxySet();
    for (let i = 0; i < 20000; i++) expect(set.add({ host: `h${i % 10000}`, port: 1 })).toBe(i < 10000);
    expect(set.size).toBe(10000);
  });
});
