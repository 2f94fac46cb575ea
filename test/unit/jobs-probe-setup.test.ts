import { describe, expect, test } from 'bun:test';
import { originGeo, probeSettingsFor } from '../../src/jobs/probe-setup';
import type { ProbeSettings } from '../../src/probe/types';

const base = { type: 'http', timeoutMs: 1000, tlsJudge: { host: '127.0.0.1', port: 1 }, httpsCheck: true } as unknown as ProbeSettings;

describe('probeSettingsFor', () => {
  test('the factory\'s settings for the type and timeout; opted out of https: no TLS judge and httpsCheck false', () => {
    const asked: unknown[] = [];
    const make = (type: string, timeoutMs: number) => (asked.push([type, timeoutMs]), { ...base, type, timeoutMs }) as ProbeSettings;
    const on = probeSettingsFor(make, 'auto', 2500, true);
    expect(on).toMatchObject({ type: 'auto', timeoutMs: 2500, httpsCheck: true });
    expect(on.tlsJudge).toBeDefined();
    const off = probeSettingsFor(make, 'socks5', 3000, false);
    expect(off).toMatchObject({ type: 'socks5', timeoutMs: 3000, httpsCheck: false });
    expect('tlsJudge' in off).toBe(false);
    expect(asked).toEqual([
      ['auto', 2500],
      ['socks5', 3000],
    ]);
  });
});

describe('originGeo', () => {
  const geo = { lookup: (ip: string) => ({ country: ip, country_name: null, location: null, isp: null, asn: null }) as never };
  test('looked up for a working result with an origin only', () => {
    expect(originGeo(geo, { status: 'working', origin: '5.6.7.8' })).toMatchObject({ country: '5.6.7.8' });
    expect(originGeo(geo, { status: 'working', origin: null })).toBeNull();
    expect(originGeo(geo, { status: 'failed', origin: '5.6.7.8' })).toBeNull();
  });
});
