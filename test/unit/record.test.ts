/** Tests for src/results/record.ts: the result record's exact shape for working and failed probes. */
import { describe, expect, test } from 'bun:test';
import type { ProbeResult } from '../../src/probe/types';
import { buildProxyRecord, type RecordGeo } from '../../src/results/record';
import type { SamplesBlock } from '../../src/results/samples';

const geo: RecordGeo = {
  country: 'DE',
  country_name: 'Germany',
  location: 'Frankfurt am Main',
  isp: 'Hetzner Online GmbH',
  asn: 24940,
  coordinates: { lat: 50.1109, lon: 8.6821 },
};

const working: ProbeResult = {
  index: 3,
  status: 'working',
  statusCode: 200,
  responseTimeMs: 123.456,
  anonymity: 'elite',
  origin: '203.0.113.7',
  error: null,
};

const failed: ProbeResult = {
  index: 4,
  status: 'failed',
  statusCode: null,
  responseTimeMs: 2000,
  anonymity: null,
  origin: null,
  error: { code: 'connect_timeout', message: 'no TCP connection within 2000 ms' },
};

describe('buildProxyRecord', () => {
  test('working proxy with auth: every field, in order', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 8080, username: 'u', password: 'p:w@' }, working, geo);
    expect(r).toEqual({
      proxy: { host: '198.51.100.1', port: 8080, hasAuth: true, username: 'u', password: 'p:w@' },
      status: 'working',
      statusCode: 200,
      responseTime: '123.46 ms',
      anonymity: 'elite',
      origin: '203.0.113.7',
      country: 'DE',
      country_name: 'Germany',
      location: 'Frankfurt am Main',
      isp: 'Hetzner Online GmbH',
      asn: 24940,
      coordinates: { lat: 50.1109, lon: 8.6821 },
    });
    expect(Object.keys(r)).toEqual([
      'proxy', 'status', 'statusCode', 'responseTime', 'anonymity', 'origin',
      'country', 'country_name', 'location', 'isp', 'asn', 'coordinates',
    ]);
    expect('error' in r).toBe(false);
    expect(r.coordinates).not.toBe(geo.coordinates); // a copy, not shared
  });

  test('no auth: no username/password keys', () => {
    const r = buildProxyRecord({ host: '2001:db8::1', port: 3128 }, working, null);
    expect(r.proxy).toEqual({ host: '2001:db8::1', port: 3128, hasAuth: false });
    expect('username' in r.proxy).toBe(false);
    expect(r.country).toBeNull();
    expect(r.coordinates).toBeNull();
  });

  test('failed proxy: error, nulls, geo ignored', () => {
    const r = buildProxyRecord({ host: 'proxy.example', port: 1 }, failed, geo);
    expect(r).toEqual({
      proxy: { host: 'proxy.example', port: 1, hasAuth: false },
      status: 'failed',
      statusCode: null,
      responseTime: '2000.00 ms',
      anonymity: null,
      origin: null,
      country: null,
      country_name: null,
      location: null,
      isp: null,
      asn: null,
      coordinates: null,
      error: { code: 'connect_timeout', message: 'no TCP connection within 2000 ms' },
    });
  });

  test('failed with an HTTP status keeps it; a missing error gets a code', () => {
    const r = buildProxyRecord({ host: 'h', port: 2 }, { ...failed, statusCode: 407, error: null }, null);
    expect(r.statusCode).toBe(407);
    expect(r.error?.code).toBe('bad_response');
  });

  test('empty password (colon format) still counts as auth', () => {
    const r = buildProxyRecord({ host: 'h', port: 2, username: 'user', password: '' }, working, null);
    expect(r.proxy).toEqual({ host: 'h', port: 2, hasAuth: true, username: 'user', password: '' });
  });

  test('a parsed proxy keeps its submitted format after the seed fields', () => {
    const r = buildProxyRecord({ host: 'h', port: 2, username: 'u', password: 'p', format: 'colon_auth' }, working, null);
    expect(r.proxy).toEqual({ host: 'h', port: 2, hasAuth: true, username: 'u', password: 'p', format: 'colon_auth' });
    expect(Object.keys(r.proxy)).toEqual(['host', 'port', 'hasAuth', 'username', 'password', 'format']);
    const bogus = buildProxyRecord({ host: 'h', port: 2, format: 'other' as never }, working, null);
    expect('format' in bogus.proxy).toBe(false);
  });
});

describe('buildProxyRecord, auto jobs (type and protocols)', () => {
  test('working: type = the first of socks5, socks4, http that passed; protocols after coordinates, before error', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...working, protocols: ['socks5', 'http'] }, geo, true);
    expect(r.type).toBe('socks5');
    expect(r.protocols).toEqual(['socks5', 'http']);
    expect(Object.keys(r)).toEqual([
      'proxy', 'status', 'statusCode', 'responseTime', 'anonymity', 'origin',
      'country', 'country_name', 'location', 'isp', 'asn', 'coordinates', 'type', 'protocols',
    ]);
    expect(buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...working, protocols: ['http'] }, geo, true).type).toBe('http');
  });

  test('failed: type null, protocols [], then error', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...failed, protocols: [] }, geo, true);
    expect(r).toMatchObject({ status: 'failed', type: null, protocols: [], error: failed.error });
    expect(Object.keys(r).slice(-3)).toEqual(['type', 'protocols', 'error']);
  });

  test('an auto job whose result carries no protocols (an internal failure) still gets both keys', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, failed, null, true);
    expect(r).toMatchObject({ type: null, protocols: [] });
  });

  test('not auto: neither key, even if a result carried protocols', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...working, protocols: ['socks5'] }, geo);
    expect('type' in r).toBe(false);
    expect('protocols' in r).toBe(false);
  });

  test('a mixed list (DECISIONS "Mixed lists"): a proxy of an auto job with its own protocol works as that one only', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080, protocol: 'socks4' }, working, geo, true);
    expect(r).toMatchObject({ type: 'socks4', protocols: ['socks4'] });
    expect(buildProxyRecord({ host: '198.51.100.1', port: 1080, protocol: 'socks4' }, failed, geo, true)).toMatchObject({ type: null, protocols: [] });
  });

  test('a mixed list in a job of one type: every record says the protocol it was checked as, no protocols', () => {
    const own = buildProxyRecord({ host: '198.51.100.1', port: 1080, protocol: 'socks5' }, working, geo, 'http');
    expect(own.type).toBe('socks5');
    expect('protocols' in own).toBe(false);
    expect(buildProxyRecord({ host: '198.51.100.1', port: 8080 }, failed, geo, 'http')).toMatchObject({ type: 'http' });
    expect(Object.keys(buildProxyRecord({ host: '198.51.100.1', port: 8080 }, failed, geo, 'http')).slice(-2)).toEqual(['type', 'error']);
  });

  test('the record owns its protocols array', () => {
    const protocols: ('socks5' | 'socks4' | 'http')[] = ['socks4'];
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...working, protocols }, geo, true);
    expect(r.protocols).toEqual(['socks4']);
    expect(r.protocols).not.toBe(protocols);
  });
});

describe('buildProxyRecord, sampled jobs (samples > 1)', () => {
  const block: SamplesBlock = { count: 3, succeeded: 1, success_rate: '33.33%', exit_ips: ['203.0.113.7'], unique_exit_ips: 1, response_time_ms: { min: 5, p50: 5, max: 5 } };

  test('samples after coordinates (and after type/protocols of an auto job), before error; the block as given', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, working, geo, false, block);
    expect(r.samples).toEqual(block);
    expect(Object.keys(r).slice(-2)).toEqual(['coordinates', 'samples']);
    const auto = buildProxyRecord({ host: '198.51.100.1', port: 1080 }, { ...failed, protocols: [] }, geo, true, { ...block, succeeded: 0, response_time_ms: null });
    expect(Object.keys(auto).slice(-4)).toEqual(['type', 'protocols', 'samples', 'error']);
  });

  test('without a block (samples = 1): no samples key', () => {
    expect('samples' in buildProxyRecord({ host: '198.51.100.1', port: 1080 }, working, geo)).toBe(false);
    expect('samples' in buildProxyRecord({ host: '198.51.100.1', port: 1080 }, working, geo, true, null)).toBe(false);
  });
});

describe('buildProxyRecord, checks with a TLS judge (https, tls_intercepted)', () => {
  test('a working record carries https (true or false) after coordinates, and after type/protocols of auto jobs', () => {
    const r = buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...working, https: true }, geo);
    expect(r.https).toBe(true);
    expect(Object.keys(r).at(-1)).toBe('https');
    expect(buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...working, https: false }, geo).https).toBe(false);
    const unknown = buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...working, https: null }, geo);
    expect(unknown.https).toBeNull();
    expect(Object.keys(unknown).at(-1)).toBe('https');
    const auto = buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...working, protocols: ['http'], https: false }, geo, true);
    expect(Object.keys(auto).slice(-3)).toEqual(['type', 'protocols', 'https']);
  });

  test('no TLS judge: no https key; a failed record never has one', () => {
    expect('https' in buildProxyRecord({ host: '198.51.100.1', port: 8080 }, working, geo)).toBe(false);
    expect('https' in buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...failed, https: true }, null)).toBe(false);
    expect('https' in buildProxyRecord({ host: '198.51.100.1', port: 8080 }, { ...failed, https: null }, null)).toBe(false);
  });

  test('tls_intercepted: the error carries the presented certificate (a copy)', () => {
    const certificate = { subject: 'CN=mitm', fingerprint: Array(32).fill('AB').join(':') };
    const probe: ProbeResult = { ...failed, error: { code: 'tls_intercepted', message: 'intercepted', certificate } };
    const r = buildProxyRecord({ host: '198.51.100.1', port: 8080 }, probe, null);
    expect(r.error).toEqual({ code: 'tls_intercepted', message: 'intercepted', certificate });
    expect(r.error?.certificate).not.toBe(certificate);
    expect('certificate' in buildProxyRecord({ host: '198.51.100.1', port: 8080 }, failed, null).error!).toBe(false);
  });
});
