/** Pool targets (src/pools/targets.ts, src/pools/target-columns.ts): names, the hourly uptime, the per-slot columns. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { foldHours, hourlyUptime, TargetColumns, TARGET_HOUR_BYTES } from '../../src/pools/target-columns';
import { defaultTargetName, isTargetName, nameTargets } from '../../src/pools/targets';

const rule = (url: string, name?: string) => ({ url, requiredStatusCodes: [200], caseSensitive: false, ...(name === undefined ? {} : { name }) });
const H = 3_600_000;

describe('target names', () => {
  test('default from the host: lower-cased, other characters -, at most 32', () => {
    expect(defaultTargetName('https://Shop.Example.COM:8443/x?y')).toBe('shop-example-com');
    expect(defaultTargetName('http://127.0.0.1:81/')).toBe('127-0-0-1');
    expect(defaultTargetName('http://[::1]:81/')).toBe('--1');
    expect(defaultTargetName(`https://${'a'.repeat(40)}.example/`)).toBe('a'.repeat(32));
    expect(defaultTargetName('not a url')).toBe('target');
  });

  test('made unique with -2, -3; given names kept and taken first', () => {
    const named = nameTargets([rule('https://a.example/1'), rule('https://a.example/2'), rule('https://b.example/', 'a-example-2'), rule('https://a.example/3')]);
    expect(named.map((r) => r.name)).toEqual(['a-example', 'a-example-3', 'a-example-2', 'a-example-4']);
    const long = nameTargets([rule(`https://${'x'.repeat(40)}/`), rule(`https://${'x'.repeat(40)}/b`)]);
    expect(long.map((r) => r.name)).toEqual(['x'.repeat(32), `${'x'.repeat(30)}-2`]);
  });

  test('property: every name valid and unique', () => {
    fc.assert(
      fc.property(fc.array(fc.webUrl(), { maxLength: 12 }), (urls) => {
        const names = nameTargets(urls.map((u) => rule(u))).map((r) => r.name);
        expect(names.every(isTargetName)).toBe(true);
        expect(new Set(names).size).toBe(names.length);
      }),
    );
  });
});

describe('hourly uptime', () => {
  test('passes over checks in the last 24 hours; none: null', () => {
    const h = new Uint8Array(TARGET_HOUR_BYTES);
    let at = 0;
    const t0 = 1000 * H;
    expect(hourlyUptime(h, at, t0)).toBeNull();
    at = foldHours(h, at, true, t0);
    at = foldHours(h, at, false, t0 + 10);
    expect(hourlyUptime(h, at, t0)).toBe(0.5);
    at = foldHours(h, at, true, t0 + 5 * H);
    expect(hourlyUptime(h, at, t0 + 5 * H)).toBeCloseTo(2 / 3);
    // the first hour leaves the window
    expect(hourlyUptime(h, at, t0 + 24 * H)).toBe(1);
    expect(hourlyUptime(h, at, t0 + 29 * H)).toBeNull();
    // a fold a day later starts again
    at = foldHours(h, at, false, t0 + 40 * H);
    expect(hourlyUptime(h, at, t0 + 40 * H)).toBe(0);
  });
});

describe('TargetColumns', () => {
  test('fold, get, set, grow', () => {
    const c = new TargetColumns('shop', 2);
    expect(c.get(1)).toBeNull();
    expect(c.passed(1)).toBe(false);
    c.fold(1, true, 200, 12.5, 5 * H);
    const s = c.get(1)!;
    expect(s).toMatchObject({ ok: true, status: 200, responseTimeMs: 12.5, lastCheckedAt: new Date(5 * H), hourAt: 5 });
    c.grow(8);
    expect(c.get(1)).toEqual(s);
    c.set(6, s);
    expect(c.get(6)).toEqual(s);
    c.fold(6, false, null, 3, 5 * H);
    expect(c.get(6)).toMatchObject({ ok: false, status: null });
    expect(hourlyUptime(c.get(6)!.hours, 5, 5 * H)).toBe(0.5);
    c.set(6, null);
    expect(c.get(6)).toBeNull();
  });
});
