/** DNS cache with an injected resolver: TTLs, negative caching, in-flight sharing, size bound, IPv4 first. */
import { expect, test } from 'bun:test';
import { DnsCache } from '../../src/probe/net/dns-cache';
import { FakeClock } from '../helpers/fake-clock';

function counting(answers: Record<string, string[] | Error>) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<string[]> => {
    calls.push(host);
    const a = answers[host];
    if (a === undefined) throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, resolve };
}

test('answers IPv4 first and shares concurrent lookups', async () => {
  const r = counting({ 'a.test': ['2001:db8::1', '192.0.2.1'] });
  const c = new DnsCache({ resolve: r.resolve });
  const [x, y] = await Promise.all([c.resolve('a.test'), c.resolve('A.TEST')]);
  expect(x).toEqual({ addresses: ['192.0.2.1', '2001:db8::1'], errorCode: null });
  expect(y).toBe(x);
  expect(r.calls).toEqual(['a.test']);
});

test('positive answers expire after the TTL', async () => {
  const r = counting({ 'a.test': ['192.0.2.1'] });
  const clock = new FakeClock();
  const c = new DnsCache({ resolve: r.resolve, ttlMs: 30, clock });
  await c.resolve('a.test');
  await clock.advance(29);
  await c.resolve('a.test');
  expect(r.calls.length).toBe(1);
  await clock.advance(1);
  await c.resolve('a.test');
  expect(r.calls.length).toBe(2);
});

test('failures are cached briefly with their error code', async () => {
  const r = counting({ empty: [] });
  const clock = new FakeClock();
  const c = new DnsCache({ resolve: r.resolve, negativeTtlMs: 30, clock });
  expect(await c.resolve('missing.test')).toEqual({ addresses: [], errorCode: 'ENOTFOUND' });
  expect(await c.resolve('empty')).toEqual({ addresses: [], errorCode: 'ENODATA' });
  await clock.advance(29);
  await c.resolve('missing.test');
  expect(r.calls).toEqual(['missing.test', 'empty']);
  await clock.advance(1);
  await c.resolve('missing.test');
  expect(r.calls.length).toBe(3);
});

test('size is bounded, oldest evicted first', async () => {
  const r = counting({ a: ['192.0.2.1'], b: ['192.0.2.2'], c: ['192.0.2.3'] });
  const c = new DnsCache({ resolve: r.resolve, maxEntries: 2 });
  await c.resolve('a');
  await c.resolve('b');
  await c.resolve('c');
  expect(c.size).toBe(2);
  await c.resolve('b');
  await c.resolve('a');
  expect(r.calls).toEqual(['a', 'b', 'c', 'a']);
});

test('the system resolver answers localhost', async () => {
  const c = new DnsCache();
  const a = await c.resolve('localhost');
  expect(a.addresses.length).toBeGreaterThan(0);
});

test('prime pins an answer without asking the resolver', async () => {
  const r = counting({});
  const c = new DnsCache({ resolve: r.resolve });
  c.prime('pinned.test', { addresses: ['192.0.2.9'], errorCode: null }, 1000);
  expect(await c.resolve('PINNED.test')).toEqual({ addresses: ['192.0.2.9'], errorCode: null });
  expect(r.calls).toEqual([]);
});
