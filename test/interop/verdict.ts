/**
 * What the interop tests assert: the engine's verdict on one real daemon.
 *
 * `startInteropJudge` starts the service's raw judge on 127.0.0.1 port 0 (one
 * per test file). `probeThrough` runs one real probe (src/probe/probe.ts)
 * through a daemon with the settings the interop suite uses: loopback targets
 * allowed, the checker's own address as the judge sees it on loopback
 * (127.0.0.1) as the transparency test, no calibration baseline. `verdictOf`
 * reduces a ProbeResult to the fields asserted exactly.
 */
import { runProbe } from '../../src/probe/probe';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import type { Anonymity, JudgeTarget, ProbeErrorCode, ProbeResult, ProbeSettings } from '../../src/probe/types';
import type { ProxyType } from '../../src/proxy/types';
import type { RunningDaemon } from './daemons';

/** Budget of a probe that is expected to work (loopback: a few ms in practice). */
export const PROBE_TIMEOUT_MS = 3_000;

export interface InteropJudge {
  server: JudgeServer;
  target: JudgeTarget;
}

export async function startInteropJudge(): Promise<InteropJudge> {
  const server = await startJudgeServer({ host: '127.0.0.1', port: 0 });
  return { server, target: parseJudgeUrl(server.url) };
}

export function interopSettings(type: ProxyType, judge: JudgeTarget, timeoutMs = PROBE_TIMEOUT_MS): ProbeSettings {
  return {
    type,
    timeoutMs,
    judge,
    checkerIps: ['127.0.0.1'],
    baselineHeaders: [],
    allowPrivateTargets: true,
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
  return runProbe({ index: 0, proxy }, interopSettings(type, judge.target, timeoutMs));
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
