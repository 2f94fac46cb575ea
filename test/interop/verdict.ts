/**
 * What the interop tests assert: the engine's verdict on one real daemon.
 *
 * `startInteropJudge` starts the service's raw judge on 127.0.0.1 port 0 (one
 * per test file); `startInteropTlsJudge` the same judge behind TLS (test
 * certificate, trusted through ProbeSettings.tlsCa); both sign their answers
 * and every probe verifies them (INTEROP_JUDGE_KEY), so a daemon that changed
 * one body byte would be `tampered`. `probeThrough` runs one real probe (src/probe/probe.ts)
 * through a daemon with the settings the interop suite uses: loopback targets
 * allowed, the checker's own address as the judge sees it on loopback
 * (127.0.0.1) as the transparency test, no calibration baseline. `verdictOf`
 * reduces a ProbeResult to the fields asserted exactly.
 */
import { runProbe } from '../../src/probe/probe';
import { startJudgeServer } from '../../src/judge/server';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import { runAutoProbe } from '../../src/probe/auto';
import type { Anonymity, JudgeTarget, ProbeErrorCode, ProbeResult, ProbeSettings, TlsJudgeTarget } from '../../src/probe/types';
import { fingerprintOfDer, pemCertificateDer } from '../../src/probe/codec/cert-pin';
import type { CheckType, ProxyType } from '../../src/proxy/types';
import type { RunningDaemon } from './daemons';
import { startTlsJudge } from '../fixtures/fake-servers';
import { TEST_CERT } from '../fixtures/tls-cert';

/** The key the interop judges sign with and the probes verify with. */
export const INTEROP_JUDGE_KEY = 'interop-judge-key-0123456789';

/** Budget of a probe that is expected to work (loopback: a few ms in practice). */
export const PROBE_TIMEOUT_MS = 3_000;

export interface InteropJudge {
  target: JudgeTarget;
  /** CA the probe must trust (the test certificate) for the https judge. */
  tlsCa?: string;
  close(): Promise<void>;
}

/** The service's raw judge over plain HTTP (HTTP proxies: absolute-form GET). */
export async function startInteropJudge(): Promise<InteropJudge> {
  const server = await startJudgeServer({ host: '127.0.0.1', port: 0, key: INTEROP_JUDGE_KEY });
  return { target: parseJudgeUrl(server.url), close: () => server.close() };
}

/** The same judge behind TLS with the test certificate (HTTP proxies: CONNECT; SOCKS: TLS in the tunnel). */
export async function startInteropTlsJudge(): Promise<InteropJudge> {
  const server = await startTlsJudge(INTEROP_JUDGE_KEY);
  return { target: parseJudgeUrl(`https://127.0.0.1:${server.port}/judge`), tlsCa: TEST_CERT, close: () => server.close() };
}

/** The TLS judge of the https check (settings.tlsJudge): that judge's listener, its test certificate pinned. */
export function pinnedTlsJudge(tls: InteropJudge): TlsJudgeTarget {
  return { ...tls.target, protocol: 'https:', fingerprint: fingerprintOfDer(pemCertificateDer(TEST_CERT)!), key: INTEROP_JUDGE_KEY };
}

/** One probe through a daemon against the plain judge, then the https check against `tlsJudge` (runProbe with settings.tlsJudge). */
export function httpsProbeThrough(type: ProxyType, daemon: RunningDaemon, judge: InteropJudge, tlsJudge: TlsJudgeTarget, creds?: Creds): Promise<ProbeResult> {
  const proxy = creds === undefined
    ? { host: daemon.host, port: daemon.port }
    : { host: daemon.host, port: daemon.port, username: creds.user, password: creds.password };
  return runProbe({ index: 0, proxy }, { ...interopSettings(type, judge), tlsJudge });
}

export function interopSettings<T extends CheckType>(type: T, judge: InteropJudge, timeoutMs = PROBE_TIMEOUT_MS): ProbeSettings & { type: T } {
  return {
    type,
    timeoutMs,
    judge: judge.target,
    checkerIps: ['127.0.0.1'],
    baselineHeaders: [],
    allowPrivateTargets: true,
    judgeKey: INTEROP_JUDGE_KEY,
    ...(judge.tlsCa === undefined ? {} : { tlsCa: judge.tlsCa }),
  };
}

export interface Creds {
  user: string;
  password: string;
}

export function probeThrough(
  type: ProxyType,
  daemon: RunningDaemon,
  judge: InteropJudge,
  creds?: Creds,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ProbeResult> {
  const proxy = creds === undefined
    ? { host: daemon.host, port: daemon.port }
    : { host: daemon.host, port: daemon.port, username: creds.user, password: creds.password };
  return runProbe({ index: 0, proxy }, interopSettings(type, judge, timeoutMs));
}

/** One `type: "auto"` probe (src/probe/auto.ts) through a daemon: every protocol is tried. */
export function autoProbeThrough(daemon: RunningDaemon, judge: InteropJudge, creds?: Creds, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const proxy = creds === undefined
    ? { host: daemon.host, port: daemon.port }
    : { host: daemon.host, port: daemon.port, username: creds.user, password: creds.password };
  return runAutoProbe({ index: 0, proxy }, interopSettings('auto', judge, timeoutMs));
}

export interface Verdict {
  status: 'working' | 'failed';
  anonymity: Anonymity | null;
  code: ProbeErrorCode | null;
  statusCode: number | null;
}

export function verdictOf(r: ProbeResult): Verdict {
  return { status: r.status, anonymity: r.anonymity, code: r.error?.code ?? null, statusCode: r.statusCode };
}

export const working = (anonymity: Anonymity): Verdict => ({ status: 'working', anonymity, code: null, statusCode: 200 });

export const failed = (code: ProbeErrorCode, statusCode: number | null = null): Verdict => ({
  status: 'failed',
  anonymity: null,
  code,
  statusCode,
});
