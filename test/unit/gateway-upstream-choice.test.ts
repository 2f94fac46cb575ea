/** The gateway's choice of upstream (src/gateway/upstream-choice.ts): rotation, filters, sessions, tries. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { MAX_TRIES, STICKY_MS, SUSPECT_MS, UpstreamChooser, type Upstream, type UpstreamWant, type WorkingSet } from '../../src/gateway/upstream-choice';

const up = (i: number, over: Partial<Upstream> = {}): Upstream => ({
  key: `10.0.0.${i} 8080`,
  host: `10.0.0.${i}`,
  port: 8080,
  type: 'http',
  protocols: ['http'],
  country: 'DE',
  ...over,
});
const set = (upstreams: Upstream[], poolId = 'abcdefghij'): WorkingSet => ({ poolId, upstreams });
const want = (over: Partial<UpstreamWant> = {}): UpstreamWant => ({ country: null, type: null, session: null, rotate: 'round_robin', ...over });
const NOW = 1_000_000;

/** One connection that succeeds with its first candidate; the chosen host. */
function connect(c: UpstreamChooser, w: WorkingSet, wt: UpstreamWant, now = NOW): string | null {
  const a = c.begin(w, wt, now);
  const u = a.next();
  if (u !== null) a.succeeded(u);
  return u?.host ?? null;
}

describe('rotation', () => {
  test('round-robin visits every match in turn', () => {
    const c = new UpstreamChooser();
    const w = set([up(1), up(2), up(3)]);
    expect(Array.from({ length: 7 }, () => connect(c, w, want()))).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.1']);
  });

  test('random: uses the random source over the matches', () => {
    const seq = [0.9, 0.1, 0.5];
    let i = 0;
    const c = new UpstreamChooser({ random: () => seq[i++ % seq.length] as number });
    const w = set([up(1), up(2), up(3)]);
    expect(Array.from({ length: 3 }, () => connect(c, w, want({ rotate: 'random' })))).toEqual(['10.0.0.3', '10.0.0.1', '10.0.0.2']);
  });

  test('filters: country and type (its type or a passing protocol)', () => {
    const c = new UpstreamChooser();
    const w = set([up(1, { country: 'FR' }), up(2, { type: 'socks5', protocols: ['socks5', 'http'] }), up(3, { type: 'socks4', protocols: ['socks4'] })]);
    expect(connect(c, w, want({ country: 'FR' }))).toBe('10.0.0.1');
    expect(new Set(Array.from({ length: 4 }, () => connect(c, w, want({ type: 'http' }))))).toEqual(new Set(['10.0.0.1', '10.0.0.2']));
    expect(connect(c, w, want({ type: 'socks4' }))).toBe('10.0.0.3');
    expect(connect(c, w, want({ country: 'US' }))).toBeNull();
    expect(c.begin(w, want({ country: 'US' }), NOW).matches).toBe(0);
  });
});

describe('sessions', () => {
  test('a token sticks to its upstream while it works, at most 30 minutes', () => {
    const c = new UpstreamChooser();
    const w = set([up(1), up(2), up(3)]);
    const first = connect(c, w, want({ session: 'abc' }));
    for (let i = 0; i < 5; i++) expect(connect(c, w, want({ session: 'abc' }), NOW + i * 60_000)).toBe(first);
    expect(connect(c, w, want({ session: 'other' }))).not.toBe(first);
    expect(connect(c, w, want({ session: 'abc' }), NOW + STICKY_MS)).not.toBe(first);
    expect(c.sessions).toBe(2);
  });

  test('a failed sticky upstream is replaced, and the replacement sticks', () => {
    const c = new UpstreamChooser();
    const w = set([up(1), up(2), up(3)]);
    const first = connect(c, w, want({ session: 's' }));
    const a = c.begin(w, want({ session: 's' }), NOW + 1000);
    const u = a.next() as Upstream;
    expect(u.host).toBe(first as string);
    a.failed(u);
    const v = a.next() as Upstream;
    expect(v.host).not.toBe(first);
    a.succeeded(v);
    expect(a.failedUpstreams).toEqual([u]);
    expect(connect(c, w, want({ session: 's' }), NOW + 2000)).toBe(v.host);
  });

  test('an upstream that left the working set unbinds its sessions; the same token in another pool is another session', () => {
    const c = new UpstreamChooser();
    const w1 = set([up(1), up(2)]);
    expect(connect(c, w1, want({ session: 's' }))).toBe('10.0.0.1');
    const w2 = set([up(2)]);
    expect(connect(c, w2, want({ session: 's' }))).toBe('10.0.0.2');
    expect(connect(c, set([up(1), up(2)], 'otherpool0'), want({ session: 's' }))).toBe('10.0.0.1');
  });

  test('at most maxSessions are remembered, the oldest go first; prune forgets expired ones', () => {
    const c = new UpstreamChooser({ maxSessions: 2 });
    const w = set([up(1), up(2), up(3)]);
    for (const s of ['a', 'b', 'c']) connect(c, w, want({ session: s }));
    expect(c.sessions).toBe(2);
    c.prune(NOW + STICKY_MS);
    expect(c.sessions).toBe(0);
  });
});

describe('tries', () => {
  test('at most MAX_TRIES distinct upstreams, then null', () => {
    const c = new UpstreamChooser();
    const a = c.begin(set([1, 2, 3, 4, 5].map((i) => up(i))), want(), NOW);
    const seen: string[] = [];
    for (let u = a.next(); u !== null; u = a.next()) {
      seen.push(u.key);
      a.failed(u);
    }
    expect(seen.length).toBe(MAX_TRIES);
    expect(new Set(seen).size).toBe(MAX_TRIES);
    expect(a.failedUpstreams.length).toBe(MAX_TRIES);
  });

  test('fewer matches than tries: each once; after success nothing more', () => {
    const c = new UpstreamChooser();
    const a = c.begin(set([up(1), up(2)]), want(), NOW);
    const x = a.next() as Upstream;
    a.failed(x);
    const y = a.next() as Upstream;
    expect(y.key).not.toBe(x.key);
    a.failed(y);
    expect(a.next()).toBeNull();
    const b = c.begin(set([up(1), up(2)]), want(), NOW);
    b.succeeded(b.next() as Upstream);
    expect(b.next()).toBeNull();
  });

  test('property: candidates are distinct matches, at most MAX_TRIES, whatever fails', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ country: fc.constantFrom('DE', 'FR', null), type: fc.constantFrom('http' as const, 'socks5' as const) }), { maxLength: 8 }),
        fc.constantFrom('DE', null),
        fc.constantFrom('socks5' as const, null),
        fc.constantFrom('round_robin' as const, 'random' as const),
        fc.option(fc.constantFrom('s1', 's2'), { nil: null }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (specs, country, type, rotate, session, outcomes, r) => {
          const c = new UpstreamChooser({ random: () => r });
          const w = set(specs.map((s, i) => up(i, { country: s.country, type: s.type, protocols: [s.type] })));
          for (const ok of outcomes) {
            const a = c.begin(w, { country, type, rotate, session }, NOW);
            const offered: Upstream[] = [];
            for (let u = a.next(); u !== null; u = a.next()) {
              expect(w.upstreams).toContain(u);
              if (country !== null) expect(u.country).toBe(country);
              if (type !== null) expect(u.type).toBe(type);
              offered.push(u);
              if (ok) {
                a.succeeded(u);
                break;
              }
              a.failed(u);
            }
            expect(new Set(offered.map((u) => u.key)).size).toBe(offered.length);
            expect(offered.length).toBeLessThanOrEqual(MAX_TRIES);
            expect(offered.length).toBe(ok ? Math.min(1, a.matches) : Math.min(MAX_TRIES, a.matches));
          }
        },
      ),
    );
  });
});

describe('suspects', () => {
  test('an upstream that failed is offered to nobody for SUSPECT_MS while another matches, in either rotation; then it is back', () => {
    const c = new UpstreamChooser({ random: () => 0 });
    const w = set([up(1), up(2), up(3)]);
    const a = c.begin(w, want(), NOW);
    const first = a.next() as Upstream;
    a.failed(first);
    expect(first.host).toBe('10.0.0.1');
    const picks = (now: number, rotate: 'round_robin' | 'random') => Array.from({ length: 6 }, () => connect(c, w, want({ rotate }), now));
    expect(picks(NOW + 1, 'round_robin')).not.toContain('10.0.0.1');
    expect(picks(NOW + 1, 'random')).not.toContain('10.0.0.1');
    // another filter of the same pool avoids it too
    expect(Array.from({ length: 4 }, () => connect(c, w, want({ country: 'DE' }), NOW + 1))).not.toContain('10.0.0.1');
    expect(picks(NOW + SUSPECT_MS, 'round_robin')).toContain('10.0.0.1');
    expect(c.suspects).toBe(1);
    c.prune(NOW + SUSPECT_MS);
    expect(c.suspects).toBe(0);
  });

  test('when every match is a suspect, suspects are offered again; a suspect of one pool is not one of another', () => {
    const c = new UpstreamChooser();
    const w = set([up(1), up(2)]);
    const a = c.begin(w, want(), NOW);
    for (let u = a.next(); u !== null; u = a.next()) a.failed(u);
    expect(connect(c, w, want(), NOW + 1)).not.toBeNull();
    const other = set([up(1)], 'otherpool01');
    const b = c.begin(other, want(), NOW + 1);
    expect(b.next()?.host).toBe('10.0.0.1');
  });
});
