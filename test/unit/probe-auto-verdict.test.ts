/** Tests for src/probe/codec/auto-verdict.ts: the pure decisions of a type "auto" probe. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  AUTO_PREFERENCE,
  autoResult,
  autoType,
  ERROR_PREFERENCE,
  LEAD_FINAL_CODES,
  leadSettles,
  mostTellingFailure,
  type AutoAttempts,
} from '../../src/probe/codec/auto-verdict';
import { PROBE_ERROR_CODES, type ProbeErrorCode, type ProbeResult } from '../../src/probe/types';
import { PROXY_TYPES } from '../../src/proxy/types';

const ok = (responseTimeMs: number, origin = '203.0.113.7'): ProbeResult => ({
  index: 0,
  status: 'working',
  statusCode: 200,
  responseTimeMs,
  anonymity: 'elite',
  origin,
  error: null,
});
const bad = (code: ProbeErrorCode, statusCode: number | null = null, responseTimeMs = 10): ProbeResult => ({
  index: 0,
  status: 'failed',
  statusCode,
  responseTimeMs,
  anonymity: null,
  origin: null,
  error: { code, message: `it was ${code}` },
});

describe('orders', () => {
  test('protocol preference: socks5, socks4, http (every protocol once)', () => {
    expect(AUTO_PREFERENCE).toEqual(['socks5', 'socks4', 'http']);
    expect([...AUTO_PREFERENCE].sort()).toEqual([...PROXY_TYPES].sort());
  });

  test('the error preference ranks every probe error code exactly once', () => {
    expect([...ERROR_PREFERENCE].sort()).toEqual([...PROBE_ERROR_CODES].sort());
  });

  test('answers that say what the proxy is rank above answers that only say it is not the guessed protocol, and those above no answer', () => {
    const rank = (c: ProbeErrorCode) => ERROR_PREFERENCE.indexOf(c);
    for (const telling of ['auth_required', 'socks_rejected', 'judge_mismatch', 'http_status'] as const) {
      expect(rank(telling)).toBeLessThan(rank('bad_response'));
      expect(rank(telling)).toBeLessThan(rank('timeout'));
    }
    for (const c of LEAD_FINAL_CODES) expect(rank(c)).toBeGreaterThan(rank('connection_closed'));
  });
});

describe('leadSettles', () => {
  test('failures before anything was connected to end the probe', () => {
    for (const c of ['connect_refused', 'connect_timeout', 'connect_failed', 'dns_failed', 'blocked_target', 'checker_overloaded'] as const) {
      expect(leadSettles(bad(c))).toBe(true);
    }
  });

  test('anything the connected port answered (or did not) lets the SOCKS attempts run; so does a working lead', () => {
    for (const c of ['timeout', 'bad_response', 'connection_closed', 'judge_mismatch', 'http_status', 'auth_required', 'tls_failed'] as const) {
      expect(leadSettles(bad(c))).toBe(false);
    }
    expect(leadSettles(ok(5))).toBe(false);
  });
});

describe('autoResult', () => {
  test('working: every passed protocol in preference order, the fields of the first', () => {
    const r = autoResult(9, { http: ok(40, '198.51.100.1'), socks4: bad('bad_response'), socks5: ok(70, '198.51.100.2') });
    expect(r).toEqual({
      index: 9,
      status: 'working',
      statusCode: 200,
      responseTimeMs: 70,
      anonymity: 'elite',
      origin: '198.51.100.2',
      error: null,
      protocols: ['socks5', 'http'],
    });
  });

  test('socks4 and socks5 on one port -> both, socks5 named first', () => {
    const r = autoResult(0, { http: bad('connection_closed'), socks5: ok(20), socks4: ok(15) });
    expect(r.protocols).toEqual(['socks5', 'socks4']);
    expect(r.responseTimeMs).toBe(20);
  });

  test('an HTTP-only proxy -> ["http"]', () => {
    expect(autoResult(0, { http: ok(12), socks5: bad('timeout'), socks4: bad('timeout') }).protocols).toEqual(['http']);
  });

  test('the lead alone (the others not tried) -> its error, protocol-prefixed', () => {
    const r = autoResult(3, { http: bad('connect_refused', null, 1.5) });
    expect(r).toEqual({
      index: 3,
      status: 'failed',
      statusCode: null,
      responseTimeMs: 1.5,
      anonymity: null,
      origin: null,
      error: { code: 'connect_refused', message: 'http: it was connect_refused' },
      protocols: [],
    });
  });

  test('none passed: the most telling error, its status code and time', () => {
    const r = autoResult(0, { http: bad('bad_response', null, 5), socks5: bad('auth_required', null, 7), socks4: bad('connection_closed', null, 6) });
    expect(r.error).toEqual({ code: 'auth_required', message: 'socks5: it was auth_required' });
    expect(r.responseTimeMs).toBe(7);
    const h = autoResult(0, { http: bad('http_status', 403, 9), socks5: bad('timeout'), socks4: bad('timeout') });
    expect(h.error?.code).toBe('http_status');
    expect(h.statusCode).toBe(403);
  });

  test('ties go to the earlier protocol (socks5, socks4, http)', () => {
    const r = autoResult(0, { http: bad('timeout'), socks5: bad('timeout'), socks4: bad('timeout') });
    expect(r.error?.message.startsWith('socks5: ')).toBe(true);
    expect(autoResult(0, { http: bad('timeout'), socks4: bad('timeout') }).error?.message.startsWith('socks4: ')).toBe(true);
  });

  test('a sub-probe the checker could not run makes the whole probe checker_overloaded when none passed (tried again, never charged)', () => {
    const r = autoResult(0, { http: bad('judge_mismatch'), socks5: bad('checker_overloaded'), socks4: bad('bad_response') });
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('checker_overloaded');
  });

  test('a proxy caught tampering under one protocol fails, even when another protocol passed (a lying proxy is never working)', () => {
    const r = autoResult(0, { http: bad('tampered'), socks5: ok(20), socks4: bad('timeout') });
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('tampered');
    expect(r.error?.message.startsWith('http: ')).toBe(true);
    // ...and over our own overload too: the lie is what the record says
    expect(autoResult(0, { http: bad('tampered'), socks5: bad('checker_overloaded') }).error?.code).toBe('tampered');
  });

  test('...but one that passed still makes it working', () => {
    const r = autoResult(0, { http: ok(5), socks5: bad('checker_overloaded'), socks4: bad('timeout') });
    expect(r.status).toBe('working');
    expect(r.protocols).toEqual(['http']);
  });

  test('nothing tried (cannot happen: the lead always runs) is a failure, never working', () => {
    const r = autoResult(0, {});
    expect(r.status).toBe('failed');
    expect(r.protocols).toEqual([]);
  });

  test('property: working iff some attempt passed and none lied (tampered, tls_intercepted); protocols = exactly the passed ones (none when it lied); a failure carries an error of one of the attempts', () => {
    const attempt = fc.oneof(
      fc.constant(ok(1)),
      fc.constantFrom(...PROBE_ERROR_CODES).map((c) => bad(c)),
    );
    fc.assert(
      fc.property(fc.option(attempt, { nil: undefined }), fc.option(attempt, { nil: undefined }), fc.option(attempt, { nil: undefined }), (h, s4, s5) => {
        const tried: AutoAttempts = {};
        if (h) tried.http = h;
        if (s4) tried.socks4 = s4;
        if (s5) tried.socks5 = s5;
        const r = autoResult(1, tried);
        const passed = AUTO_PREFERENCE.filter((p) => tried[p]?.status === 'working');
        const codes = Object.values(tried).map((t) => t.error?.code);
        const lied = codes.includes('tampered') || codes.includes('tls_intercepted');
        expect(r.protocols).toEqual(lied ? [] : passed);
        expect(r.status).toBe(passed.length > 0 && !lied ? 'working' : 'failed');
        if (lied) expect(['tampered', 'tls_intercepted']).toContain(r.error!.code);
        if (r.status === 'failed' && Object.keys(tried).length > 0) {
          expect(codes).toContain(r.error!.code);
          const best = mostTellingFailure(tried)!;
          if (lied) expect(r.error!.code).toBe(codes.includes('tampered') ? 'tampered' : 'tls_intercepted'); // tampered ranks first
          else if (!codes.includes('checker_overloaded')) expect(r.error!.code).toBe(tried[best]!.error!.code);
        }
      }),
    );
  });
});

describe('autoResult with the https check', () => {
  test('working: https of the named protocol', () => {
    expect(autoResult(1, { http: { ...ok(5), https: false }, socks5: { ...ok(9), https: true } })).toMatchObject({ status: 'working', https: true, protocols: ['socks5', 'http'] });
    expect('https' in autoResult(1, { http: ok(5) })).toBe(false);
  });

  test('an attempt that saw TLS intercepted fails the whole probe, whatever else passed, with the certificate', () => {
    const certificate = { subject: 'CN=mitm', fingerprint: Array(32).fill('AB').join(':') };
    const lied: ProbeResult = { ...bad('tls_intercepted'), error: { code: 'tls_intercepted', message: 'intercepted', certificate } };
    const r = autoResult(1, { http: lied, socks5: { ...ok(9), https: true }, socks4: bad('socks_rejected') });
    expect(r).toMatchObject({ status: 'failed', anonymity: null, origin: null, protocols: [] });
    expect(r.error).toEqual({ code: 'tls_intercepted', message: 'http: intercepted', certificate });
  });
});

describe('autoType', () => {
  test('the first of socks5, socks4, http present; null for none', () => {
    expect(autoType(['http', 'socks4'])).toBe('socks4');
    expect(autoType(['http'])).toBe('http');
    expect(autoType(['http', 'socks5', 'socks4'])).toBe('socks5');
    expect(autoType([])).toBeNull();
  });
});
