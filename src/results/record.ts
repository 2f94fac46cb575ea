/**
 * The proxy result record of the result file (seed "Proxy result record",
 * DECISIONS "Checking a proxy"), built from the parsed proxy, its probe result
 * and the geo lookup of its origin. Pure.
 *
 * Every record has every key, in one order, so readers can rely on the shape:
 * unknown values are `null` (geo of a failed proxy, `statusCode` when no HTTP
 * answer came back, `anonymity`/`origin` of a failed proxy). `error` is
 * present on failed records only. `proxy.username`/`proxy.password` are
 * present only for authenticated proxies.
 *
 * Addition to the seed's shape: `proxy.format` (`standard` | `url_auth` |
 * `colon_auth`), the address form the caller submitted, when the builder is
 * given a parsed proxy that carries it. The `.txt` download re-formats each
 * working proxy in that form (src/results/export.ts, src/proxy/format.ts).
 *
 * Auto jobs only (`type: "auto"`, src/probe/auto.ts), after `coordinates`:
 * `type` (the first of socks5, socks4, http that passed, null when none did)
 * and `protocols` (every protocol that passed the full judge check, in that
 * order; [] when none did). A proxy of an auto job whose line named its
 * protocol (`socks5://...`, DECISIONS "Mixed lists") was checked as that
 * one only: `protocols` is [it] when it works. Jobs of one type whose list
 * named a protocol on some line (a mixed list) give every record `type`: the
 * protocol it was checked as (its line's, else the job's), no `protocols`.
 * Records of other jobs have neither key.
 *
 * Sampled jobs only (`samples` > 1, src/results/samples.ts), after those:
 * `samples` {count, succeeded, success_rate, exit_ips, unique_exit_ips,
 * response_time_ms}; the rest of the record is built from the first passing
 * sample (foldSamples picks the probe result). Records of other jobs have no
 * such key.
 * With the https check (the default; a job opts out with `https: false`),
 * working records get `https` (true: a tunnel + TLS to the judge with its
 * pinned certificate passed, src/probe/https-check.ts; false: it did not;
 * null: the judge check left no budget to try), after `coordinates` (and
 * after `type`/`protocols`). Failed records never carry it; a
 * `tls_intercepted` failure's `error` adds `certificate: {subject,
 * fingerprint}` (what the tunnel presented).
 */
import type { GeoInfo } from '../geo/geo';
import type { Anonymity, ProbeError, ProbeResult } from '../probe/types';
import type { AddressFormat, ProxyAddress, ProxyType } from '../proxy/types';
import { autoType } from '../probe/codec/auto-verdict';
import { formatResponseTime } from './format';
import type { SamplesBlock } from './samples';

/** What the geo lookup of an origin address yields (null fields = unknown): src/geo's GeoInfo. */
export type RecordGeo = GeoInfo;

/** A result file's record; after `origin` come the geo fields (RecordGeo: country, country_name, location, isp, asn, coordinates). */
export interface ProxyRecord extends RecordGeo {
  proxy: { host: string; port: number; hasAuth: boolean; username?: string; password?: string; format?: AddressFormat };
  status: 'working' | 'failed';
  statusCode: number | null;
  /** "<ms with 2 decimals> ms" */
  responseTime: string;
  anonymity: Anonymity | null;
  origin: string | null;
  /** auto jobs only */
  type?: ProxyType | null;
  /** auto jobs only */
  protocols?: ProxyType[];
  /** sampled jobs only (samples > 1) */
  samples?: SamplesBlock;
  /** working records of a check that ran the https check only (null: not known, no budget left) */
  https?: boolean | null;
  error?: ProbeError;
}

const FORMATS: readonly string[] = ['standard', 'url_auth', 'colon_auth'];

export function buildProxyRecord(
  proxy: ProxyAddress & { format?: AddressFormat },
  probe: ProbeResult,
  geo: RecordGeo | null,
  /** true: an auto job; a protocol: a job of that type over a mixed list (see above); false: neither. */
  auto: boolean | ProxyType = false,
  samples: SamplesBlock | null = null,
): ProxyRecord {
  const hasAuth = proxy.username !== undefined || proxy.password !== undefined;
  const p: ProxyRecord['proxy'] = { host: proxy.host, port: proxy.port, hasAuth };
  if (hasAuth) {
    p.username = proxy.username ?? '';
    p.password = proxy.password ?? '';
  }
  if (proxy.format !== undefined && FORMATS.includes(proxy.format)) p.format = proxy.format;
  const working = probe.status === 'working';
  const g = working ? geo : null;
  const record: ProxyRecord = {
    proxy: p,
    status: probe.status,
    statusCode: probe.statusCode,
    responseTime: formatResponseTime(probe.responseTimeMs),
    anonymity: working ? probe.anonymity : null,
    origin: working ? probe.origin : null,
    country: g?.country ?? null,
    country_name: g?.country_name ?? null,
    location: g?.location ?? null,
    isp: g?.isp ?? null,
    asn: g?.asn ?? null,
    coordinates: g?.coordinates ? { lat: g.coordinates.lat, lon: g.coordinates.lon } : null,
  };
  if (auto === true) {
    const protocols = !working ? [] : probe.protocols !== undefined ? [...probe.protocols] : proxy.protocol !== undefined ? [proxy.protocol] : [];
    record.type = autoType(protocols);
    record.protocols = protocols;
  } else if (auto !== false) {
    record.type = proxy.protocol ?? auto;
  }
  if (samples !== null) record.samples = samples;
  if (working && probe.https !== undefined) record.https = probe.https;
  if (!working) {
    const e = probe.error;
    record.error = e ? { code: e.code, message: e.message } : { code: 'bad_response', message: 'probe failed without an error' };
    if (e?.certificate !== undefined) record.error.certificate = { subject: e.certificate.subject, fingerprint: e.certificate.fingerprint };
  }
  return record;
}
