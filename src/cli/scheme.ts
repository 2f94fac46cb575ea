/**
 * `--scheme` (DECISIONS "Mixed lists and the lists scrapers read"): a
 * working proxy as `<protocol>://[user:pass@]host:port`, the line a scraper
 * reads without being told the protocol. Rendered here from the records
 * (`check --simple --scheme`: the result file's; `pool working --scheme`:
 * the pool's JSON proxies), the same text as the service's `scheme=true`.
 * Pure.
 */
import { formatProxy } from '../proxy/format';

const PROTOCOLS: readonly string[] = ['http', 'socks4', 'socks5'];

export interface SchemeProxy {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** The proxy with its protocol as the scheme; without a known protocol, the address alone. */
export function schemeLine(p: SchemeProxy, protocol: unknown): string {
  const address = formatProxy(p.username !== undefined ? { host: p.host, port: p.port, username: p.username, password: p.password ?? '' } : { host: p.host, port: p.port }, 'url_auth');
  return typeof protocol === 'string' && PROTOCOLS.includes(protocol) ? `${protocol}://${address}` : address;
}

/**
 * The protocol a record was checked (or passed) as: its own `type` (auto
 * checks, and mixed lists whose lines carry a scheme), else the check's.
 */
export function recordProtocol(r: { type?: unknown; protocol?: unknown }, checkType: unknown): unknown {
  return r.type ?? r.protocol ?? checkType;
}
