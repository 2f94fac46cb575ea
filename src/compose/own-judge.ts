/**
 * The judge a process probes against, one set of steps for the service
 * (src/server.ts) and the agent (src/agent.ts):
 *
 * - `judgeKeys`: the key this process's own /judge signs with (JUDGE_KEY, or
 *   a random key per start) and the key answers are verified with (the own
 *   key; an external judge's is JUDGE_KEY, and without it nothing is
 *   verified: config.ts refuses that in a cluster).
 * - `serveJudgeTls`: the built-in judge's TLS listener (DATA_DIR's
 *   certificate, JUDGE_TLS_PORT on HOST), always when the judge is this
 *   process's own (API nodes and agents alike: a cluster's agents may pin it),
 *   in a thread of its own (src/judge/tls-judge-thread.ts) unless
 *   JUDGE_TLS_THREAD=main.
 * - `ProbeJudge`: what the probes are sent to (JUDGE_URL or this process's
 *   own /judge, the pinned TLS judge), what calibration learned (this
 *   process's exit addresses), and the ProbeSettings built from both.
 * - `judgeGuard`: the descriptor guard of a process that serves its own judge
 *   (src/fd-guard.ts), started over the scheduler or the runner.
 * - `placeJudge` / `judgeBase`: where the own judge is reached and by whom
 *   (src/judge/judge-address.ts), decided once at start.
 *
 * ProbeJudge's states: made (keys and TLS listener known; the plain judge's
 * address is not: with PORT=0 it is known once the listener is bound)
 * --start(selfUrl)--> started (its target fixed; calibration running when
 * this process probes) --stop()--> stopped. settings() before start() throws
 * (no job runs before the start ends).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import type { HttpConfig, JudgeConfig, ProbesConfig, StorageConfig } from '../config';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';
import { DescriptorGuard, type GuardTarget } from '../fd-guard';
import { parseJudgeUrl, startCalibration, type CalibrationHandle, type CalibrationResult } from '../judge/calibrate';
import { judgeAddress, type JudgeAddress, type LocalAddresses } from '../judge/judge-address';
import { startJudgeServer } from '../judge/server';
import { startJudgeTlsThread } from '../judge/tls-judge-thread';
import { readOrCreateJudgeCertificate } from '../judge/tls-cert';
import { checkTlsJudge } from '../judge/tls-judge-check';
import type { Logger } from '../log';
import { probeSettings, withoutHttpsCheck } from '../probe/settings';
import { sessionFor, sessionKey } from '../probe/net/tls-sessions';
import type { JudgeTarget, ProbeSettings, TlsJudgeTarget } from '../probe/types';
import type { StopStep } from '../stop-steps';
import { bindAsync } from './bind';

/** What the judge steps read: the judge group, the probes' switches, DATA_DIR (the certificate), HOST (the TLS listener). */
type JudgeParts = { judge: JudgeConfig; probes: Pick<ProbesConfig, 'allowPrivateTargets' | 'tlsCaFile'>; storage: Pick<StorageConfig, 'dataDir'>; http: Pick<HttpConfig, 'host'> };

export interface JudgeKeys {
  /** This process's own /judge signs its answers with it. */
  sign: string;
  /** Answers are verified with it; undefined: an external judge without JUDGE_KEY (nothing verified). */
  verify: string | undefined;
}

/** Whether the judge is this process's own (/judge on its listener): JUDGE_URL unset. */
export function isOwnJudge(judge: Pick<JudgeConfig, 'url'>): boolean {
  return judge.url === undefined;
}

/** The keys (`random` for tests). The random key is never written anywhere: a restart is a new key. */
export function judgeKeys(judge: Pick<JudgeConfig, 'url' | 'key'>, random: () => string = () => randomBytes(32).toString('base64url')): JudgeKeys {
  const sign = judge.key ?? random();
  return { sign, verify: isOwnJudge(judge) ? sign : judge.key };
}

/** Where the judge is reached and by whom, from the settings and this machine's addresses (`listenerUrl`: BASE_URL, or the agent's listener). */
export function placeJudge(config: JudgeParts & { http: Pick<HttpConfig, 'host'> }, listener: { url: string; urlSet: boolean }, local: LocalAddresses): JudgeAddress {
  return judgeAddress({ judgeUrl: config.judge.url, baseUrl: listener.url, baseUrlSet: listener.urlSet, listenHost: config.http.host, local });
}

/** The base URL of this process's own judge: the listener's URL, its host replaced by the one `placeJudge` chose. */
export function judgeBase(place: JudgeAddress, listenerUrl: string): string {
  if (place.host === null) return listenerUrl;
  const u = new URL(listenerUrl);
  u.hostname = place.host;
  return u.origin;
}

/** Says at start who can reach the judge; loudly when its host was derived and proxies elsewhere cannot. */
export function logJudgePlace(place: JudgeAddress, log: Logger): void {
  if (place.reach === null || place.reach === 'public') return;
  log.warn(
    `THE JUDGE IS REACHABLE FROM ${place.reach.toUpperCase()}: proxies elsewhere cannot reach it and every check of them fails. ` +
      'Set BASE_URL (or JUDGE_URL) to an address they can reach (docs/OPERATIONS.md "The judge").',
    { judgeReachable: place.reach, from: place.from },
  );
}

/** The own judge's TLS listener: its port and the certificate's fingerprint (what every probe pins). */
export interface OwnJudgeTls {
  port: number;
  fingerprint: string;
}

/** Starts the built-in judge's TLS listener when the judge is this process's own; null otherwise. */
export async function serveJudgeTls(
  config: JudgeParts,
  o: { key: string; port: number; log: Logger; undo: StopStep[] },
): Promise<OwnJudgeTls | null> {
  if (!isOwnJudge(config.judge)) return null;
  const { dataDir } = config.storage;
  mkdirSync(dataDir, { recursive: true });
  const cert = await readOrCreateJudgeCertificate(dataDir);
  if (cert.created) o.log.info('made the judge TLS certificate', { path: cert.path, fingerprint: cert.fingerprint });
  const listener = { host: config.http.host, port: o.port, key: o.key, tls: { key: cert.key, cert: cert.cert } };
  // in a thread of its own unless JUDGE_TLS_THREAD=main (src/judge/tls-thread.ts says why)
  const server = await bindAsync({ setting: 'JUDGE_TLS_PORT', host: config.http.host, port: o.port }, () =>
    config.judge.tlsThread === 'main' ? startJudgeServer(listener) : startJudgeTlsThread({ ...listener, log: o.log }),
  );
  o.undo.push(() => server.close());
  return { port: server.port, fingerprint: cert.fingerprint };
}

/**
 * The https check's pinned TLS judge: an external one (JUDGE_TLS_URL +
 * fingerprint), else the own listener reached at the plain judge's host;
 * none for an external JUDGE_URL without JUDGE_TLS_URL. Whatever JUDGE_TLS
 * says (only the requests' default: a request may ask for the check). Pure.
 */
export function tlsJudgeTarget(config: JudgeConfig, judge: JudgeTarget, own: OwnJudgeTls | null, keys: JudgeKeys): TlsJudgeTarget | undefined {
  if (config.tlsUrl !== undefined && config.tlsFingerprint !== undefined) {
    return { ...parseJudgeUrl(config.tlsUrl), protocol: 'https:', fingerprint: config.tlsFingerprint, ...(config.key !== undefined ? { key: config.key } : {}) };
  }
  if (own === null) return undefined;
  const host = judge.host.includes(':') ? `[${judge.host}]` : judge.host;
  return { ...parseJudgeUrl(`https://${host}:${own.port}/judge`), protocol: 'https:', fingerprint: own.fingerprint, key: keys.sign };
}

interface Started {
  judge: JudgeTarget;
  tls: TlsJudgeTarget | undefined;
  calibration: CalibrationHandle | null;
}

/** The settings objects kept at once (one per type and budget; the workers send one to a lane once, by identity). */
const SETTINGS_KEPT = 256;

export class ProbeJudge {
  readonly #config: JudgeParts;
  readonly #keys: JudgeKeys;
  readonly #ownTls: OwnJudgeTls | null;
  readonly #log: Logger;
  readonly #tlsCa: string | undefined;
  readonly #settings = new Map<string, ProbeSettings>();
  #calibrated: CalibrationResult;
  #started: Started | null = null;

  constructor(o: { config: JudgeParts; keys: JudgeKeys; ownTls: OwnJudgeTls | null; log: Logger }) {
    this.#config = o.config;
    this.#keys = o.keys;
    this.#ownTls = o.ownTls;
    this.#log = o.log;
    const caFile = o.config.probes.tlsCaFile;
    this.#tlsCa = caFile === undefined ? undefined : readFileSync(caFile, 'utf8');
    this.#calibrated = { ips: [...o.config.judge.checkerIps], baselineHeaders: [] };
    if (o.keys.verify === undefined) o.log.warn('JUDGE_URL without JUDGE_KEY: judge answers are not signed, integrity is not checked', { judge: o.config.judge.url });
  }

  /**
   * Fixes the judge (JUDGE_URL, or `${selfUrl}/judge`, this process's own) and,
   * when `calibrate` (this process sends probes), learns its exit addresses
   * from it: resolves after the first round. A TLS judge that presents another
   * certificate than the pinned one rejects (a start error: every working
   * proxy would be tls_intercepted).
   */
  async start(selfUrl: string, o: { calibrate: boolean; undo: StopStep[] }): Promise<void> {
    const judge = parseJudgeUrl(this.#config.judge.url ?? `${selfUrl}/judge`);
    const tls = tlsJudgeTarget(this.#config.judge, judge, this.#ownTls, this.#keys);
    const calibration = o.calibrate ? this.#calibrate(judge) : null;
    this.#started = { judge, tls, calibration };
    o.undo.push(() => this.stop());
    const tlsCheck = tls === undefined ? null : await checkTlsJudge(tls);
    // the start check's TLS session (pinned), handed to the probe threads: their first checks resume it
    const session = tls === undefined ? undefined : sessionFor(sessionKey(tls.host, tls.port, tls.fingerprint));
    if (tls !== undefined && session !== undefined) tls.session = new Uint8Array(session);
    if (tlsCheck !== null && !tlsCheck.ok) {
      this.#log.warn('the TLS judge did not answer directly; https checks may all be false (JUDGE_TLS_URL, JUDGE_TLS_FINGERPRINT; JUDGE_TLS=false turns them off)', { judgeTls: tls?.url, reason: tlsCheck.reason });
    }
    await calibration?.ready;
  }

  #calibrate(judge: JudgeTarget): CalibrationHandle {
    const verify = this.#keys.verify;
    return startCalibration({
      judge,
      extraIps: this.#config.judge.checkerIps,
      intervalMs: this.#config.judge.calibrationIntervalMs,
      onUpdate: (r) => {
        this.#calibrated = r;
        this.#settings.clear();
        this.#log.debug('calibrated', { judge: judge.url, ips: r.ips, baselineHeaders: r.baselineHeaders });
      },
      ...(this.#tlsCa !== undefined ? { tlsCa: this.#tlsCa } : {}),
      ...(verify !== undefined ? { judgeKey: verify } : {}),
      // tried again 1 s later, doubling up to 30 s, until it succeeds (judge/calibrate.ts)
      onError: (err, retryInMs) => this.#log.warn('judge calibration failed; using CHECKER_IPS only until a retry succeeds', { judge: judge.url, retryInMs, err }),
    });
  }

  #now(): Started {
    if (this.#started === null) throw new ServiceError(ENTRY_ERROR_CODES.JUDGE_NOT_STARTED, 'the probe judge is used before its start');
    return this.#started;
  }

  /** The judge's URL (after start). */
  get url(): string {
    return this.#now().judge.url;
  }

  /** The pinned TLS judge, when the https check is on (after start). */
  get tls(): TlsJudgeTarget | undefined {
    return this.#now().tls;
  }

  /** This process's addresses as the judge saw them, with CHECKER_IPS. */
  get exitIps(): string[] {
    return this.#calibrated.ips;
  }

  /**
   * One ProbeSettings object per (type, budget, https) until calibration
   * changes (the workers send each to a lane once, by identity). `https`
   * false: a job that opted out of the https check (withoutHttpsCheck).
   */
  settings(type: ProbeSettings['type'], timeoutMs: number, https = true): ProbeSettings {
    const key = `${type}:${timeoutMs}:${https}`;
    const kept = this.#settings.get(key);
    if (kept !== undefined) return kept;
    const { judge, tls } = this.#now();
    if (this.#settings.size >= SETTINGS_KEPT) this.#settings.clear();
    const s = probeSettings({
      type,
      timeoutMs,
      judge,
      calibrated: this.#calibrated,
      allowPrivateTargets: this.#config.probes.allowPrivateTargets,
      tlsCa: this.#tlsCa,
      judgeKey: this.#keys.verify,
      tlsJudge: tls,
    });
    const made = https ? s : withoutHttpsCheck(s);
    this.#settings.set(key, made);
    return made;
  }

  stop(): void {
    this.#started?.calibration?.stop();
  }
}

/**
 * The descriptor guard of a process that serves its own judge: made here (so
 * the scheduler or runner can be given its wake()), started over them with
 * `startGuard`. Null when the judge is elsewhere or the open-file limit is
 * unknown (or unlimited).
 */
export function judgeGuard(judge: Pick<JudgeConfig, 'url'>, openFiles: number | null, cap: number): DescriptorGuard | null {
  if (!isOwnJudge(judge) || openFiles === null || !Number.isFinite(openFiles)) return null;
  return new DescriptorGuard({ openFiles, cap });
}

/** Starts `guard` over `target` (nothing when there is no guard); a kernel that does not count descriptors is logged. */
export function startGuard(guard: DescriptorGuard | null, target: GuardTarget, o: { log: Logger; undo: StopStep[]; cap: number }): void {
  if (guard === null) return;
  guard.start(target);
  if (!guard.running) o.log.warn('open descriptors are not readable (/proc/self/fd, Linux >= 6.2): the built-in judge keeps only its static share', { cap: o.cap });
  o.undo.push(() => guard.stop());
}
