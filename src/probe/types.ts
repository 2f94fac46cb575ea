/**
 * The probe engine's data model: what a probe is asked to do and what it
 * reports. Plain, structured-clone-able objects: they cross the worker-thread
 * boundary as they are.
 */
import type { CheckType, ProxyAddress, ProxyType } from '../proxy/types';

/** Stable error codes of a failed probe (DECISIONS "Checking a proxy"). */
export const PROBE_ERROR_CODES = Object.freeze([
  'connect_refused', // TCP RST / ECONNREFUSED from the proxy
  'connect_timeout', // the budget ran out before the TCP connection was up
  'connect_failed', // any other socket error while connecting (unreachable, reset)
  'timeout', // connected, but the budget ran out before the full answer
  'auth_required', // HTTP 407, or SOCKS auth rejected / required but not given
  'socks_rejected', // SOCKS server refused the CONNECT (or chose no usable method)
  'bad_response', // the bytes that came back are not the protocol we spoke
  'judge_mismatch', // an HTTP 200 that is not the judge's answer with our nonce
  'tampered', // an HTTP 200 with our nonce whose body is not the bytes the judge signed (changed, extended, re-encoded)
  'http_status', // the proxy answered with a non-200 status (statusCode says which)
  'tls_failed', // TLS through the tunnel failed (https judge or custom URL)
  'tls_intercepted', // the tunnel to the TLS judge presented another certificate than the judge's pinned one (a lying proxy)
  'dns_failed', // proxy hostname did not resolve
  'blocked_target', // SSRF guard: the proxy or target resolves to a forbidden range
  'connection_closed', // the proxy closed the connection before a full answer
  'text_not_found', // custom URL: the answer did not contain requiredText
  'checker_overloaded', // OUR side ran out of a local resource (file descriptors, buffers, ports): the proxy was not tried
] as const);

/** Socket error codes that mean this process, not the proxy, ran out of something (checker_overloaded). */
export const LOCAL_EXHAUSTION_CODES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL']);
export type ProbeErrorCode = (typeof PROBE_ERROR_CODES)[number];

export interface ProbeError {
  code: ProbeErrorCode;
  message: string;
  /** tls_intercepted only: the certificate the tunnel presented instead of the judge's. */
  certificate?: PresentedCertificate;
  /**
   * checker_overloaded only: the probe timed out while its thread was this
   * many ms late reading it (src/probe/codec/checker-lag.ts); absent when the checker
   * ran out of a resource instead. Not written to result records.
   */
  checkerLagMs?: number;
}

/** A TLS peer certificate as a record names it (codec/cert-pin.ts). */
export interface PresentedCertificate {
  /** "CN=..., O=..." (empty when the certificate has no subject) */
  subject: string;
  /** SHA-256 of the certificate's DER, upper-case hex pairs joined by ":" */
  fingerprint: string;
}

export type Anonymity = 'elite' | 'anonymous' | 'transparent';

/** Where probes are sent: parsed once from JUDGE_URL. */
export interface JudgeTarget {
  /** e.g. "http://127.0.0.1:3000/judge" */
  url: string;
  protocol: 'http:' | 'https:';
  host: string; // hostname or IP literal, no brackets
  port: number;
  /** path + optional query of the judge endpoint; the probe appends its nonce parameter. */
  path: string;
}

/**
 * The judge's TLS listener (JUDGE_TLS_URL, or the built-in judge's own): a
 * working proxy is tried with a tunnel + TLS to it, and the certificate it
 * presents must be the one pinned here (src/probe/https-check.ts).
 */
export interface TlsJudgeTarget extends JudgeTarget {
  protocol: 'https:';
  /** The pinned certificate's SHA-256 fingerprint (codec/cert-pin.ts normalizeFingerprint form). */
  fingerprint: string;
  /** The key its answers are signed with; absent: only the nonce is checked (the pinned TLS already proves who answered). */
  key?: string;
  /**
   * A TLS session with this judge the composition root already holds (its
   * start check, pinned): a probe thread that has none of its own offers it,
   * so a job's first wave resumes instead of every check doing a full
   * handshake (src/probe/net/tls-sessions.ts).
   */
  session?: Uint8Array;
}

/** Shared by every probe of one job. */
export interface ProbeSettings {
  /** One protocol, or 'auto': each protocol is tried (src/probe/auto.ts). */
  type: CheckType;
  timeoutMs: number;
  judge: JudgeTarget;
  /** The checker's own public addresses (calibration + CHECKER_IPS): the transparency test. */
  checkerIps: string[];
  /** Lower-cased header names the judge path adds by itself (calibration baseline). */
  baselineHeaders: string[];
  allowPrivateTargets: boolean;
  /** Extra CA certificates (PEM) trusted for https judges and custom URLs; default: the system roots only. */
  tlsCa?: string;
  /**
   * The key the judge signs its answers with (src/probe/codec/integrity.ts):
   * then every answer must verify, and one that does not is `tampered`.
   * Absent: the judge does not sign (an external JUDGE_URL without
   * JUDGE_KEY) and integrity is not checked.
   */
  judgeKey?: string;
  /**
   * The judge's TLS listener: every working proxy also gets the https check
   * (tunnel + TLS to it, pinned) and its result `https`. Absent: no check,
   * no `https` field.
   */
  tlsJudge?: TlsJudgeTarget;
  /**
   * false: the job opted out of the https check (`"https": false`,
   * settings.ts withoutHttpsCheck): no tlsJudge here, and a cluster's agent
   * must not add its own (cluster/protocol.ts WorkShard `https`). Absent:
   * the check runs wherever a TLS judge is known.
   */
  httpsCheck?: false;
}

/** Settings of one protocol: what runProbe and runCustomUrl speak through (an auto job's are derived per protocol). */
export type ProtocolSettings = ProbeSettings & { type: ProxyType };

/** The outcome of checking one proxy against the judge. */
export interface ProbeResult {
  /** Index of the proxy in the job's list (so results can stream back in any order). */
  index: number;
  status: 'working' | 'failed';
  /** HTTP status seen through the proxy, null when no HTTP answer came back. */
  statusCode: number | null;
  /** Milliseconds from connect start to the last byte of the judge's response (or to the failure). */
  responseTimeMs: number;
  /** Set on working proxies only. */
  anonymity: Anonymity | null;
  /** The address the judge saw (working proxies only). */
  origin: string | null;
  error: ProbeError | null;
  /**
   * Auto probes only (settings.type 'auto'): every protocol that passed the
   * full judge check, in the order socks5, socks4, http; [] when none did.
   * Absent on every other probe.
   */
  protocols?: ProxyType[];
  /**
   * Working proxies only, when the settings have a tlsJudge: true when a
   * tunnel (CONNECT, or the SOCKS tunnel) + TLS to the judge's TLS listener
   * with its pinned certificate passed the judge check inside the budget,
   * false when it did not, null when it could not run (the judge check left
   * no budget, or this process ran out of descriptors for it). Absent otherwise.
   */
  https?: boolean | null;
}

/** A custom URL rule after validation (DECISIONS defaults applied). */
export interface CustomUrlRule {
  url: string;
  requiredStatusCodes: number[];
  requiredText?: string;
  caseSensitive: boolean;
}

/** The outcome of one (working proxy, custom URL) pair. */
export interface CustomUrlResult {
  index: number; // proxy index in the job
  urlIndex: number; // rule index
  success: boolean;
  statusCode: number | null;
  responseTimeMs: number;
  error: ProbeError | null;
}

/** What the probe workers are asked to run. */
export type ProbeTask = { index: number; proxy: ProxyAddress };
