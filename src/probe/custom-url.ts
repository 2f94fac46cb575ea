/**
 * Custom URL validation through a working proxy (DECISIONS "Checking a
 * proxy"): one GET to the rule's URL through the proxy (HTTP proxy:
 * absolute-form for http targets, CONNECT + TLS for https; SOCKS: tunnel,
 * then plain HTTP or TLS), no redirects followed, at most 1 MiB of body
 * read, the same total timeout as the probe (the target's DNS lookup for the
 * SSRF guard counts against it). Success: status in requiredStatusCodes and
 * requiredText found (case-insensitive unless caseSensitive).
 *
 * The text is searched by the streaming matcher (codec/text-match.ts), a
 * 64 KiB slice of the body at a time, stopping at the first hit: no decoded
 * or lower-cased copy of the whole body is made (two UTF-16 copies of a
 * 1 MiB body are up to 4 MiB of strings per fetch). The body itself is still read up to
 * CUSTOM_URL_BODY_CAP and held by the exchange (net/exchange.ts collects it)
 * until the verdict: stopping the read at the first hit needs a body sink in
 * the exchange, which this file cannot add from here.
 */
import { isIP } from 'node:net';
import { errorText } from '../errors';
import type { CustomUrlResult, CustomUrlRule, ProbeError, ProbeSettings, ProbeTask } from './types';
import { exchange } from './net/exchange';
import { dnsCache } from './net/dns-cache';
import { blockedTargetMessage, isBlockedAddress } from './codec/ssrf';
import { textMatcher } from './codec/text-match';

export const CUSTOM_URL_BODY_CAP = 1024 * 1024;
/** The body is fed to the text matcher this many bytes at a time (bounds the decoded copy). */
export const TEXT_MATCH_SLICE = 64 * 1024;

interface Target {
  tls: boolean;
  host: string;
  port: number;
  pathWithQuery: string;
}

function parseTarget(url: string): Target | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const tls = u.protocol === 'https:';
  let host = u.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') return null;
  return { tls, host, port: u.port === '' ? (tls ? 443 : 80) : Number(u.port), pathWithQuery: (u.pathname || '/') + u.search };
}

/** Why a target may not be reached, or null when it may. */
async function guardTarget(host: string): Promise<ProbeError | null> {
  if (isIP(host) !== 0) {
    return isBlockedAddress(host) ? { code: 'blocked_target', message: blockedTargetMessage(host) } : null;
  }
  const a = await dnsCache.resolve(host);
  if (a.addresses.length === 0) return { code: 'dns_failed', message: `target host did not resolve (${a.errorCode ?? 'no address'})` };
  for (const ip of a.addresses) {
    if (isBlockedAddress(ip)) return { code: 'blocked_target', message: blockedTargetMessage(ip, host) };
  }
  return null;
}

/**
 * What the exchange does with the body: with requiredText, stream it into the
 * matcher and stop reading once the text is found (nothing of the body is
 * kept); without, the status is all we need: stop at the first body byte.
 */
function bodySink(rule: CustomUrlRule): { onBody: (chunk: Buffer) => boolean; found: () => boolean } {
  if (rule.requiredText === undefined) return { onBody: () => true, found: () => true };
  const m = textMatcher(rule.requiredText, rule.caseSensitive);
  return {
    onBody: (chunk) => {
      for (let at = 0; at < chunk.length && !m.found; at += TEXT_MATCH_SLICE) m.push(chunk.subarray(at, at + TEXT_MATCH_SLICE));
      return m.found;
    },
    found: () => m.found || m.end(),
  };
}

/** Never rejects. */
export async function runCustomUrl(
  task: ProbeTask,
  urlIndex: number,
  rule: CustomUrlRule,
  settings: ProbeSettings,
): Promise<CustomUrlResult> {
  const started = performance.now();
  const result: CustomUrlResult = { index: task.index, urlIndex, success: false, statusCode: null, responseTimeMs: 0, error: null };
  try {
    const via = settings.type;
    if (via === 'auto') {
      // an auto job sends each working proxy's custom URLs with the settings of its detected protocol (jobs/shards.ts)
      result.error = { code: 'bad_response', message: 'internal error: a custom URL needs the proxy\'s protocol, not auto' };
      return result;
    }
    const target = parseTarget(rule.url);
    if (target === null) {
      result.error = { code: 'bad_response', message: 'custom URL is not a valid http or https URL' };
      return result;
    }
    if (!settings.allowPrivateTargets) {
      const refused = await guardTarget(target.host);
      if (refused !== null) {
        result.error = refused;
        result.responseTimeMs = performance.now() - started;
        return result;
      }
    }
    const left = settings.timeoutMs - (performance.now() - started);
    if (left <= 0) {
      result.error = { code: 'connect_timeout', message: `not connected within ${settings.timeoutMs} ms (DNS lookup)` };
      result.responseTimeMs = performance.now() - started;
      return result;
    }
    const sink = bodySink(rule);
    const out = await exchange({
      via,
      proxy: task.proxy,
      host: target.host,
      port: target.port,
      tls: target.tls,
      pathWithQuery: target.pathWithQuery,
      timeoutMs: left,
      bodyCap: CUSTOM_URL_BODY_CAP,
      onBody: sink.onBody,
      allowPrivateTargets: settings.allowPrivateTargets,
      tlsCa: settings.tlsCa,
    });
    result.statusCode = out.statusCode;
    result.responseTimeMs = out.elapsedMs;
    if (out.error !== null) {
      result.error = out.error;
      return result;
    }
    const code = out.statusCode as number;
    if (!rule.requiredStatusCodes.includes(code)) {
      result.error =
        code === 407
          ? { code: 'auth_required', message: 'proxy answered 407 Proxy Authentication Required' }
          : { code: 'http_status', message: `status ${code} is not one of ${rule.requiredStatusCodes.join(', ')}` };
      return result;
    }
    if (!sink.found()) {
      result.error = { code: 'text_not_found', message: 'the required text was not found in the response body' };
      return result;
    }
    result.success = true;
    return result;
  } catch (e) {
    result.error = { code: 'bad_response', message: `internal error: ${errorText(e)}` };
    return result;
  }
}
