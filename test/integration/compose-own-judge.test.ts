/**
 * src/compose/own-judge.ts, the https check's part: the pinned TLS judge is
 * there whatever JUDGE_TLS says (JUDGE_TLS is only the requests' default),
 * and ProbeJudge's settings for a job that opted out carry no TLS judge
 * (what an agent builds for a shard with `https: false`), one object per
 * (type, budget, https).
 */
import { describe, expect, test } from 'bun:test';
import { parseConfig } from '../../src/config';
import { memoryLogger } from '../../src/log';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import { ProbeJudge, tlsJudgeTarget } from '../../src/compose/own-judge';
import type { StopStep } from '../../src/stop-steps';
import { startJudgeServer } from '../../src/judge/server';
import { fingerprintOfDer, pemCertificateDer } from '../../src/probe/codec/cert-pin';
import { TEST_CERT, TEST_KEY } from '../fixtures/tls-cert';

const FP = 'AB:'.repeat(31) + 'AB';
const keys = { sign: 'sign-key-0123456789', verify: 'sign-key-0123456789' };
const judge = parseJudgeUrl('http://127.0.0.1:3000/judge');

describe('tlsJudgeTarget', () => {
  test('the own listener, with JUDGE_TLS on or off; an external one when configured; none for an external judge without one', () => {
    const own = { port: 4443, fingerprint: FP };
    for (const tls of ['true', 'false']) {
      const cfg = parseConfig({ JUDGE_TLS: tls }, '/').judge;
      expect(tlsJudgeTarget(cfg, judge, own, keys)).toMatchObject({ url: 'https://127.0.0.1:4443/judge', fingerprint: FP, key: keys.sign });
    }
    const external = parseConfig({ JUDGE_TLS_URL: 'https://j.example:8443/judge', JUDGE_TLS_FINGERPRINT: FP, JUDGE_TLS: 'false' }, '/').judge;
    expect(tlsJudgeTarget(external, judge, null, keys)).toMatchObject({ url: 'https://j.example:8443/judge', fingerprint: FP });
    const noTls = parseConfig({ JUDGE_URL: 'http://j.example/judge', JUDGE_KEY: 'judge-key-0123456789' }, '/').judge;
    expect(tlsJudgeTarget(noTls, judge, null, keys)).toBeUndefined();
  });
});

describe('ProbeJudge.start', () => {
  test('the start check of a TLS judge that answers hands its session to the settings (the probe threads resume it)', async () => {
    const server = await startJudgeServer({ key: keys.sign, tls: { key: TEST_KEY, cert: TEST_CERT } });
    try {
      const pin = fingerprintOfDer(pemCertificateDer(TEST_CERT)!);
      const config = parseConfig({ JUDGE_TLS_URL: server.url, JUDGE_TLS_FINGERPRINT: pin, JUDGE_KEY: keys.sign }, '/');
      const pj = new ProbeJudge({ config, keys, ownTls: null, log: memoryLogger('warn') });
      const undo: StopStep[] = [];
      await pj.start('http://127.0.0.1:3000', { calibrate: false, undo });
      const s = pj.settings('socks5', 3000);
      expect(s.tlsJudge?.session).toBeInstanceOf(Uint8Array);
      expect(s.tlsJudge!.session!.length).toBeGreaterThan(0);
      for (const u of undo) await u();
    } finally {
      await server.close();
    }
  });
});

describe('ProbeJudge.settings', () => {
  test('https false: no TLS judge and httpsCheck false; each (type, budget, https) one object', async () => {
    // an external TLS judge nobody answers at: the start's direct check only warns
    const config = parseConfig({ JUDGE_TLS_URL: 'https://127.0.0.1:1/judge', JUDGE_TLS_FINGERPRINT: FP }, '/');
    const log = memoryLogger('warn');
    const pj = new ProbeJudge({ config, keys, ownTls: null, log });
    const undo: StopStep[] = [];
    await pj.start('http://127.0.0.1:3000', { calibrate: false, undo });
    const on = pj.settings('http', 2000);
    const off = pj.settings('http', 2000, false);
    expect(on.tlsJudge).toMatchObject({ url: 'https://127.0.0.1:1/judge', fingerprint: FP });
    expect(off).not.toHaveProperty('tlsJudge');
    expect(off.httpsCheck).toBe(false);
    expect(pj.settings('http', 2000, true)).toBe(on);
    expect(pj.settings('http', 2000, false)).toBe(off);
    for (const u of undo) await u();
  });
});
