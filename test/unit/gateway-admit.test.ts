/**
 * Admission (src/gateway/admit.ts) with fake ports: the credential check
 * (username grammar, key, pool; a failed look-up), the per-key cap
 * (KeySlots), and admit(): the cap, the SSRF guard on literals and on every
 * address a name resolves to, DNS failures; a refusal holds no slot.
 */
import { describe, expect, test } from 'bun:test';
import { hashApiKey } from '../../src/accounts/keys';
import { admit, checkCredentials, KeySlots, type AdmitPorts } from '../../src/gateway/admit';
import type { GatewayPools } from '../../src/gateway/ports';
import type { DnsAnswer } from '../../src/probe/net/dns-cache';

const POOL = 'abcdefghij';
const WORKING = { poolId: POOL, upstreams: [] };

function pools(over: Partial<GatewayPools> = {}): Pick<GatewayPools, 'authenticate' | 'workingSet'> & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    authenticate:
      over.authenticate ??
      (async (key) => {
        calls.push(`auth ${key}`);
        return key === 'good' ? { id: 'acct-1' } : null;
      }),
    workingSet:
      over.workingSet ??
      (async (account, pool) => {
        calls.push(`set ${account} ${pool}`);
        return pool === POOL ? WORKING : null;
      }),
  };
}

describe('checkCredentials', () => {
  test('accepted: the account, the key\'s hash, the parsed username, the working set', async () => {
    const r = await checkCredentials(pools(), `pool-${POOL}-country-de`, 'good');
    expect(r).toEqual({ kind: 'accepted', auth: { account: { id: 'acct-1' }, keyHash: hashApiKey('good'), user: expect.objectContaining({ poolId: POOL, country: 'DE' }), working: WORKING } });
  });

  test('one answer for a bad username (the key not even looked up), a wrong key, another pool', async () => {
    const p = pools();
    expect(await checkCredentials(p, 'nobody', 'good')).toEqual({ kind: 'denied' });
    expect(p.calls).toEqual([]);
    expect(await checkCredentials(p, `pool-${POOL}`, 'bad')).toEqual({ kind: 'denied' });
    expect(await checkCredentials(p, 'pool-otherpool1', 'good')).toEqual({ kind: 'denied' });
  });

  test('a look-up that fails: unavailable, with the error', async () => {
    const err = new Error('db down');
    expect(await checkCredentials(pools({ authenticate: () => Promise.reject(err) }), `pool-${POOL}`, 'good')).toEqual({ kind: 'unavailable', err });
    expect(await checkCredentials(pools({ workingSet: () => Promise.reject(err) }), `pool-${POOL}`, 'good')).toEqual({ kind: 'unavailable', err });
  });
});

describe('KeySlots', () => {
  test('at most max per key; released slots come back; an idle key is forgotten', () => {
    const s = new KeySlots(2);
    expect([s.take('a'), s.take('a'), s.take('a'), s.take('b')]).toEqual([true, true, false, true]);
    s.release('a');
    expect(s.take('a')).toBe(true);
    s.release('a');
    s.release('a');
    s.release('b');
    expect(s.keys).toBe(0);
  });
});

describe('admit', () => {
  function ports(answer: DnsAnswer | Error, allowPrivateTargets = false, max = 5): AdmitPorts & { asked: string[] } {
    const asked: string[] = [];
    return {
      asked,
      slots: new KeySlots(max),
      allowPrivateTargets,
      resolve: async (h) => {
        asked.push(h);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    };
  }
  const v = (...addresses: string[]): DnsAnswer => ({ addresses }) as DnsAnswer;

  test('a public literal: admitted without DNS, holding a slot', async () => {
    const p = ports(v());
    expect(await admit(p, 'k', '93.184.216.34')).toEqual({ kind: 'admitted', slotKey: 'k', targetV4: null });
    expect(await admit(p, 'k', '2606:2800:220:1:248:1893:25c8:1946')).toMatchObject({ kind: 'admitted' });
    expect([p.asked, p.slots.keys]).toEqual([[], 1]);
  });

  test('a private target is blocked (literal or any resolved address) unless allowed; the slot goes back', async () => {
    const p = ports(v('93.184.216.34', '10.0.0.1'));
    expect(await admit(p, 'k', '127.0.0.1')).toEqual({ kind: 'refused', code: 'blocked_target' });
    expect(await admit(p, 'k', 'inside.example')).toEqual({ kind: 'refused', code: 'blocked_target' });
    expect(p.slots.keys).toBe(0);
    const open = ports(v('10.0.0.1'), true);
    expect(await admit(open, 'k', '127.0.0.1')).toMatchObject({ kind: 'admitted' });
    expect(await admit(open, 'k', 'inside.example')).toEqual({ kind: 'admitted', slotKey: 'k', targetV4: '10.0.0.1' });
  });

  test('a name: its first IPv4 address kept (for a SOCKS4 upstream); no address or a DNS error: dns_failed', async () => {
    expect(await admit(ports(v('2606:2800::1', '93.184.216.34', '93.184.216.35')), 'k', 'example.com')).toEqual({ kind: 'admitted', slotKey: 'k', targetV4: '93.184.216.34' });
    expect(await admit(ports(v('2606:2800::1')), 'k', 'example.com')).toEqual({ kind: 'admitted', slotKey: 'k', targetV4: null });
    const none = ports(v());
    expect(await admit(none, 'k', 'example.com')).toEqual({ kind: 'refused', code: 'dns_failed' });
    const broken = ports(new Error('SERVFAIL'));
    expect(await admit(broken, 'k', 'example.com')).toEqual({ kind: 'refused', code: 'dns_failed' });
    expect([none.slots.keys, broken.slots.keys]).toEqual([0, 0]);
  });

  test('the per-key cap: too_many_connections before anything else; other keys unaffected', async () => {
    const p = ports(v('93.184.216.34'), false, 1);
    expect(await admit(p, 'k', 'example.com')).toMatchObject({ kind: 'admitted' });
    expect(await admit(p, 'k', 'example.com')).toEqual({ kind: 'refused', code: 'too_many_connections' });
    expect(p.asked).toEqual(['example.com']);
    expect(await admit(p, 'other', '93.184.216.34')).toMatchObject({ kind: 'admitted' });
    p.slots.release('k');
    expect(await admit(p, 'k', '93.184.216.34')).toMatchObject({ kind: 'admitted' });
  });
});
