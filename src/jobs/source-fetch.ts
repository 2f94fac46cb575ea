/**
 * Fetches a pool's list URL (DECISIONS "Pools": `sources`, "fetched with the
 * SSRF guard, a size cap and a timeout"): a thin driver over node:http and
 * node:https. What it reads is handed to src/pools/source-extract.ts.
 *
 * - Only http: and https: URLs, at every hop.
 * - The SSRF guard of the probes (src/probe/codec/ssrf.ts isBlockedAddress)
 *   at every hop, on the address actually connected to: an IP literal is
 *   judged as it is; a name is resolved by our own `lookup` (all its
 *   addresses; one blocked refuses the hop, as the gateway does), and the
 *   connection goes to the address judged, so a name cannot resolve to a
 *   public address for the guard and a private one for the connection.
 *   `allowPrivateTargets` (ALLOW_PRIVATE_TARGETS) turns it off.
 * - Redirects (301, 302, 303, 307, 308 with a Location) are followed up to
 *   `maxRedirects`, each hop guarded anew.
 * - One deadline, `timeoutMs`, for the whole fetch, redirects included.
 * - `maxBytes` caps the body (a Content-Length over it is refused before a
 *   byte is read); no compression is asked for, so the cap is on what the
 *   list holds. The body is read as UTF-8.
 *
 * A failure throws a ServiceError with a SOURCE_* code (src/error-codes.ts),
 * which the pool object shows in `sources[].last_fetch.error`.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { JOB_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';
import { blockedTargetMessage, isBlockedAddress } from '../probe/codec/ssrf';
import { VERSION } from '../version';

export interface SourceFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Redirects followed at most (DEFAULT_SOURCE_REDIRECTS). */
  maxRedirects?: number;
  /** ALLOW_PRIVATE_TARGETS: no guard at all. */
  allowPrivateTargets: boolean;
  /** The guard (isBlockedAddress); a test narrows it to reach its loopback server while refusing another address. */
  blocked?: (ip: string) => boolean;
  /** Aborts the fetch (the service stops); it rejects as a timeout would not: SOURCE_FETCH_FAILED. */
  signal?: AbortSignal;
  /** All addresses of a name (dns.lookup, all: true); injectable for tests. */
  resolve?: (host: string) => Promise<string[]>;
}

/** Redirects a fetch follows by default. */
export const DEFAULT_SOURCE_REDIRECTS = 5;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const fail = (code: string, message: string, cause?: unknown): ServiceError => new ServiceError(code, message, cause === undefined ? undefined : { cause });

async function systemResolve(host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true })).map((a) => a.address);
}

/** The body of `url` as text. Throws a ServiceError with a SOURCE_* code. */
export async function fetchSource(url: string, o: SourceFetchOptions): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), o.timeoutMs);
  const stop = (): void => abort.abort();
  o.signal?.addEventListener('abort', stop);
  try {
    if (o.signal?.aborted === true) throw fail(JOB_ERROR_CODES.SOURCE_FETCH_FAILED, 'aborted');
    let at = url;
    const max = o.maxRedirects ?? DEFAULT_SOURCE_REDIRECTS;
    for (let hop = 0; ; hop++) {
      const r = await oneHop(at, o, abort.signal);
      if (r.location === null) return r.body;
      if (hop >= max) throw fail(JOB_ERROR_CODES.SOURCE_TOO_MANY_REDIRECTS, `more than ${max} redirects`);
      at = r.location;
    }
  } catch (err) {
    if (o.signal?.aborted === true) throw fail(JOB_ERROR_CODES.SOURCE_FETCH_FAILED, 'aborted', err);
    if (abort.signal.aborted) throw fail(JOB_ERROR_CODES.SOURCE_TIMEOUT, `the list did not arrive within ${o.timeoutMs} ms`, err);
    throw err;
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', stop);
  }
}

/** One request: its body, or the next URL of a redirect. */
function oneHop(at: string, o: SourceFetchOptions, signal: AbortSignal): Promise<{ body: string; location: string | null }> {
  let u: URL;
  try {
    u = new URL(at);
  } catch (err) {
    return Promise.reject(fail(JOB_ERROR_CODES.SOURCE_BAD_REDIRECT, `not a URL: ${at.slice(0, 200)}`, err));
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return Promise.reject(fail(JOB_ERROR_CODES.SOURCE_BAD_REDIRECT, `not an http(s) URL: ${u.protocol}`));
  const blocked = o.allowPrivateTargets ? () => false : (o.blocked ?? isBlockedAddress);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  if (isIP(host) !== 0 && blocked(host)) return Promise.reject(fail(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET, blockedTargetMessage(host)));
  const resolve = o.resolve ?? systemResolve;
  // our lookup: the guard judges every address of the name, the connection goes to the first one judged
  let refusal: ServiceError | null = null;
  const lookup = (name: string, opts: { all?: boolean }, cb: (err: Error | null, address?: unknown, family?: number) => void): void => {
    resolve(name).then(
      (addresses) => {
        if (addresses.length === 0) refusal = fail(JOB_ERROR_CODES.SOURCE_DNS_FAILED, `${name} did not resolve`);
        else {
          const bad = addresses.find(blocked);
          if (bad !== undefined) refusal = fail(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET, blockedTargetMessage(bad, name));
        }
        if (refusal !== null) return cb(refusal);
        const first = addresses[0] as string;
        const family = isIP(first);
        if (opts?.all === true) cb(null, [{ address: first, family }]);
        else cb(null, first, family);
      },
      (err: unknown) => {
        refusal = fail(JOB_ERROR_CODES.SOURCE_DNS_FAILED, `${name} did not resolve`, err);
        cb(refusal);
      },
    );
  };
  const options: RequestOptions = {
    method: 'GET',
    signal,
    lookup: lookup as unknown as RequestOptions['lookup'],
    headers: { 'user-agent': `proxycheck-service/${VERSION} (pool source)`, accept: 'text/plain, */*;q=0.5', 'accept-encoding': 'identity' },
  };
  return new Promise((resolvePromise, reject) => {
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, options, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && typeof location === 'string' && location !== '') {
        res.destroy();
        let next: string;
        try {
          next = new URL(location, u).href;
        } catch (err) {
          reject(fail(JOB_ERROR_CODES.SOURCE_BAD_REDIRECT, `a bad Location: ${location.slice(0, 200)}`, err));
          return;
        }
        resolvePromise({ body: '', location: next });
        return;
      }
      if (status < 200 || status > 299) {
        res.destroy();
        reject(fail(JOB_ERROR_CODES.SOURCE_HTTP_STATUS, `the list answered ${status}`));
        return;
      }
      readCapped(res, o.maxBytes).then((body) => resolvePromise({ body, location: null }), reject);
    });
    req.on('error', (err) => reject(refusal ?? (err instanceof ServiceError ? err : fail(JOB_ERROR_CODES.SOURCE_FETCH_FAILED, `the list could not be fetched: ${err.message}`, err))));
    req.end();
  });
}

/** The body as UTF-8 text; a SOURCE_TOO_LARGE failure as soon as it passes `maxBytes`. */
function readCapped(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const end = (err: ServiceError | null, text = ''): void => {
      if (settled) return;
      settled = true;
      if (err === null) resolve(text);
      else {
        reject(err);
        res.destroy();
      }
    };
    const tooLarge = () => fail(JOB_ERROR_CODES.SOURCE_TOO_LARGE, `the list is larger than ${maxBytes} bytes`);
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) return end(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) end(tooLarge());
      else chunks.push(chunk);
    });
    res.on('end', () => end(null, new TextDecoder('utf-8').decode(Buffer.concat(chunks))));
    res.on('error', (err) => end(fail(JOB_ERROR_CODES.SOURCE_FETCH_FAILED, `the list could not be read: ${err.message}`, err)));
    res.on('aborted', () => end(fail(JOB_ERROR_CODES.SOURCE_FETCH_FAILED, 'the list was cut off')));
  });
}
