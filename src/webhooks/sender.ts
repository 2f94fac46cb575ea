/**
 * One attempt of one delivery: a thin driver over node:http / node:https
 * (DECISIONS "Webhooks": 15 s, no redirects, the answer read up to 64 KiB).
 *
 * - The SSRF guard (src/probe/codec/ssrf.ts isBlockedAddress) at every
 *   attempt, on the address actually connected to: the name is resolved
 *   anew by our own `lookup` (all its addresses; one blocked refuses the
 *   attempt, as the pools' list fetcher does), and the connection goes to
 *   the address judged, so a name cannot pass the guard with one address and
 *   connect to another. ALLOW_PRIVATE_TARGETS turns the guard off. (fetch
 *   cannot pin the connection to the judged address; hence node:http.)
 * - One deadline for the whole attempt (connect, send, answer); a 3xx is an
 *   answer like any other non-2xx: recorded, not followed.
 * - At most `maxBytes` of the answer are read, then the connection is
 *   closed: a receiver that streams forever costs nothing.
 *
 * Never rejects: the outcome is `{status, error, durationMs}` (status null
 * when no answer came).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { blockedTargetMessage, isBlockedAddress } from '../probe/codec/ssrf';
import { VERSION } from '../version';

export const ATTEMPT_TIMEOUT_MS = 15_000;
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface SendInput {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface SendOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** All addresses of a name; injectable for tests. */
  resolve?: (host: string) => Promise<string[]>;
  /** The guard (isBlockedAddress); a test narrows it. */
  blocked?: (ip: string) => boolean;
  signal?: AbortSignal;
}

export interface SendOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  /** Ended by `signal` (the service stops), not by the receiver: not an attempt to record. */
  aborted?: boolean;
}

async function systemResolve(host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true })).map((a) => a.address);
}

export function sendAttempt(input: SendInput, o: SendOptions): Promise<SendOutcome> {
  const t0 = performance.now();
  const took = () => Math.round(performance.now() - t0);
  const timeoutMs = o.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const maxBytes = o.maxBytes ?? MAX_ANSWER_BYTES;
  return new Promise<SendOutcome>((resolve) => {
    let done = false;
    let refusal: string | null = null;
    const abort = new AbortController();
    const finish = (status: number | null, error: string | null, aborted = false): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onStop);
      abort.abort();
      resolve({ status, error, durationMs: took(), ...(aborted ? { aborted } : {}) });
    };
    const timer = setTimeout(() => finish(null, `timeout: no answer within ${timeoutMs} ms`), timeoutMs);
    const onStop = (): void => finish(null, 'aborted: the service is stopping', true);
    o.signal?.addEventListener('abort', onStop, { once: true });
    if (o.signal?.aborted === true) return onStop();

    let u: URL;
    try {
      u = new URL(input.url);
    } catch {
      return finish(null, 'bad_url: not a URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return finish(null, 'bad_url: not an http(s) URL');
    const blocked = o.allowPrivateTargets ? () => false : (o.blocked ?? isBlockedAddress);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    if (isIP(host) !== 0 && blocked(host)) return finish(null, `blocked_target: ${blockedTargetMessage(host)}`);
    const resolveName = o.resolve ?? systemResolve;
    const lookup = (name: string, opts: { all?: boolean }, cb: (err: Error | null, address?: unknown, family?: number) => void): void => {
      resolveName(name).then(
        (addresses) => {
          const bad = addresses.find(blocked);
          if (addresses.length === 0) refusal = `dns_failed: ${name} did not resolve`;
          else if (bad !== undefined) refusal = `blocked_target: ${blockedTargetMessage(bad, name)}`;
          if (refusal !== null) return cb(new Error(refusal));
          const first = addresses[0] as string;
          if (opts?.all === true) cb(null, [{ address: first, family: isIP(first) }]);
          else cb(null, first, isIP(first));
        },
        () => {
          refusal = `dns_failed: ${name} did not resolve`;
          cb(new Error(refusal));
        },
      );
    };
    const options: RequestOptions = {
      method: 'POST',
      signal: abort.signal,
      lookup: lookup as unknown as RequestOptions['lookup'],
      headers: {
        ...input.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(input.body)),
        'user-agent': `proxycheck-service/${VERSION} (webhooks)`,
        'accept-encoding': 'identity',
      },
    };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, options, (res) => {
      const status = res.statusCode ?? null;
      const ok = status !== null && status >= 200 && status < 300;
      const error = ok ? null : status !== null && status >= 300 && status < 400 ? `redirect not followed (HTTP ${status})` : `HTTP ${status}`;
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size >= maxBytes) {
          finish(status, error);
          res.destroy();
        }
      });
      res.on('end', () => finish(status, error));
      res.on('error', () => finish(status, error));
      res.on('aborted', () => finish(status, error));
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(null, refusal ?? `connect_failed: ${err.code ?? err.message}`));
    req.end(input.body);
  });
}
