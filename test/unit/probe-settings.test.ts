/** src/probe/settings.ts: the ProbeSettings builder shared by the service and the probe command. */
import { describe, expect, test } from 'bun:test';
import { probeSettings, type ProbeSettingsInput } from '../../src/probe/settings';
import type { JudgeTarget } from '../../src/probe/types';

const judge: JudgeTarget = { url: 'http://127.0.0.1:3000/judge', protocol: 'http:', host: '127.0.0.1', port: 3000, path: '/judge' };

const input = (over: Partial<ProbeSettingsInput> = {}): ProbeSettingsInput => ({
  type: 'socks5',
  timeoutMs: 3000,
  judge,
  calibrated: { ips: ['203.0.113.7'], baselineHeaders: ['via'] },
  allowPrivateTargets: false,
  ...over,
});

describe('probeSettings', () => {
  test('carries type, budget, judge, calibration and switches as given', () => {
    expect(probeSettings(input())).toEqual({
      type: 'socks5',
      timeoutMs: 3000,
      judge,
      checkerIps: ['203.0.113.7'],
      baselineHeaders: ['via'],
      allowPrivateTargets: false,
    });
    expect(probeSettings(input({ type: 'http', timeoutMs: 5000, allowPrivateTargets: true }))).toMatchObject({ type: 'http', timeoutMs: 5000, allowPrivateTargets: true });
  });

  test('extra checker IPs come after the calibrated ones, each address once', () => {
    const s = probeSettings(input({ calibrated: { ips: ['203.0.113.7', '2001:db8::1'], baselineHeaders: [] }, extraCheckerIps: ['198.51.100.1', '203.0.113.7'] }));
    expect(s.checkerIps).toEqual(['203.0.113.7', '2001:db8::1', '198.51.100.1']);
  });

  test('tlsCa only when given (no undefined key: the settings cross to the workers as they are)', () => {
    expect('tlsCa' in probeSettings(input())).toBe(false);
    expect('tlsCa' in probeSettings(input({ tlsCa: undefined }))).toBe(false);
    expect(probeSettings(input({ tlsCa: '-----BEGIN CERTIFICATE-----' })).tlsCa).toBe('-----BEGIN CERTIFICATE-----');
  });

  test('the result shares no array with its input (a later calibration cannot change a job\'s settings)', () => {
    const calibrated = { ips: ['203.0.113.7'], baselineHeaders: ['via'] };
    const s = probeSettings(input({ calibrated }));
    calibrated.ips.push('198.51.100.9');
    calibrated.baselineHeaders.push('x-forwarded-for');
    expect(s.checkerIps).toEqual(['203.0.113.7']);
    expect(s.baselineHeaders).toEqual(['via']);
  });
});
