/**
 * Incremental parser of the request head a client sends to the gateway as
 * to an HTTP proxy (pure, no I/O). Feed it Buffers as they arrive (`push`),
 * tell it about EOF (`end`); any split of the same bytes gives the same
 * result. Once DONE, `head` is the parsed request and `rest` the bytes after
 * the head (the body's start, or a CONNECT client's first tunnel bytes).
 *
 * States: HEAD (collecting) -> DONE | ERROR; `end()` in HEAD is ERROR
 * `empty` (no byte) or `truncated`.
 *
 * Accepted (RFC 9112, as a forward proxy sees it):
 * - request line `METHOD SP target SP HTTP/1.0|1.1`, single spaces; empty
 *   lines before it are skipped; bare LF line ends are accepted (the head we
 *   send on is rebuilt, so the upstream only ever sees our CRLF form);
 * - CONNECT with an authority-form target `host:port` (IPv6 in brackets);
 *   any other method with an absolute-form `http://host[:port][/path][?q]`
 *   target (port 80 when absent). Hosts are normalised as proxy lists are
 *   (src/proxy/host.ts: lower-case names, strict dotted quads, canonical IPv6).
 * Refused (ERROR with a code, the driver answers 400):
 * - `not_a_proxy_request`: an origin-form (`/path`) or `*` target;
 * - `bad_target`: another scheme (https:// goes through CONNECT), userinfo
 *   in the URL, a fragment, a bad host or port, non-ASCII in the target;
 * - `bad_request_line`, `bad_header` (no colon, a name that is not a token
 *   or has white space before the colon, obs-fold continuation lines,
 *   control characters in a value), `too_many_headers`, `head_too_large`;
 * - `bad_framing`: Transfer-Encoding whose last coding is not chunked,
 *   Transfer-Encoding together with Content-Length, Content-Length values
 *   that are not digits or disagree (request smuggling's raw material).
 *   A CONNECT request has no body, whatever it says.
 *
 * Proxy-Authorization: `Basic <base64 of user:pass>` is decoded (UTF-8,
 * split at the first ":"); `auth` says whether there was none, a Basic one
 * (then `credentials`), another scheme, or a malformed one (also: more
 * than one such header).
 */
import { canonicalIPv6, hostKindAt, HOST_INVALID } from '../../proxy/host';

export const RequestHeadState = Object.freeze({ HEAD: 0, DONE: 1, ERROR: 2 } as const);
export type RequestHeadStateValue = (typeof RequestHeadState)[keyof typeof RequestHeadState];

export type RequestHeadError =
  | 'bad_request_line'
  | 'not_a_proxy_request'
  | 'bad_target'
  | 'bad_header'
  | 'too_many_headers'
  | 'head_too_large'
  | 'bad_framing'
  | 'truncated'
  | 'empty';

export type BodyFraming = { kind: 'none' } | { kind: 'length'; length: number } | { kind: 'chunked' };

export interface ProxyRequestHead {
  method: string;
  /** CONNECT: a tunnel; anything else: a request to forward. */
  connect: boolean;
  /** The target's host (no brackets) and port. */
  host: string;
  port: number;
  /** Forward requests: the origin-form target (path and query, starts with "/"); CONNECT: "". */
  path: string;
  version: '1.0' | '1.1';
  /** Every header as sent: raw names, in order. */
  headers: [string, string][];
  auth: 'none' | 'basic' | 'other' | 'malformed';
  credentials: { username: string; password: string } | null;
  framing: BodyFraming;
  /** `Expect: 100-continue` was sent (the driver may answer it itself). */
  expectsContinue: boolean;
}

export interface RequestHeadOptions {
  /** Head bytes allowed, request line and headers (default 16 KiB, Node's default). */
  headMax?: number;
  /** Header lines allowed (default 100). */
  maxHeaders?: number;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP\/1\.([01])$/;
const CTL_IN_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const DIGITS = /^[0-9]{1,15}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export class ProxyRequestParser {
  state: RequestHeadStateValue = RequestHeadState.HEAD;
  error: RequestHeadError | null = null;
  head: ProxyRequestHead | null = null;
  /** DONE: the bytes after the head (possibly empty). */
  rest: Buffer | null = null;

  readonly #headMax: number;
  readonly #maxHeaders: number;
  #parts: Buffer[] = [];
  #len = 0;
  #lineLen = 0;
  #sawContent = false;
  #seen = 0;

  constructor(opts: RequestHeadOptions = {}) {
    this.#headMax = opts.headMax ?? 16_384;
    this.#maxHeaders = opts.maxHeaders ?? 100;
  }

  push(chunk: Buffer): RequestHeadStateValue {
    if (chunk.length === 0) return this.state;
    if (this.state === RequestHeadState.DONE) {
      this.rest = this.rest === null || this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
      return this.state;
    }
    if (this.state !== RequestHeadState.HEAD) return this.state;
    this.#seen += chunk.length;
    let end = -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (c === 10) {
        if (this.#lineLen === 0 && this.#sawContent) {
          end = i + 1;
          break;
        }
        this.#lineLen = 0;
      } else if (c !== 13) {
        this.#lineLen++;
        this.#sawContent = true;
      }
    }
    const stop = end === -1 ? chunk.length : end;
    this.#len += stop;
    if (this.#len > this.#headMax) return this.#fail('head_too_large');
    this.#parts.push(chunk.subarray(0, stop));
    if (end === -1) return this.state;
    const text = Buffer.concat(this.#parts, this.#len).toString('latin1');
    this.#parts = [];
    this.rest = chunk.subarray(stop);
    const parsed = parseHead(text, this.#maxHeaders);
    if (typeof parsed === 'string') return this.#fail(parsed);
    this.head = parsed;
    this.state = RequestHeadState.DONE;
    return this.state;
  }

  /** EOF from the client. */
  end(): RequestHeadStateValue {
    if (this.state === RequestHeadState.HEAD) return this.#fail(this.#seen === 0 ? 'empty' : 'truncated');
    return this.state;
  }

  #fail(code: RequestHeadError): RequestHeadStateValue {
    this.error = code;
    this.state = RequestHeadState.ERROR;
    this.#parts = [];
    this.rest = null;
    return this.state;
  }
}

function stripCr(s: string): string {
  return s.endsWith('\r') ? s.slice(0, -1) : s;
}

/** `host` (bracketed IPv6 allowed) of a target, normalised; null when invalid. */
function targetHost(s: string): string | null {
  if (s.startsWith('[')) {
    if (!s.endsWith(']')) return null;
    return canonicalIPv6(s.slice(1, -1));
  }
  const kind = hostKindAt(s, 0, s.length);
  if (kind === HOST_INVALID) return null;
  return s.toLowerCase();
}

/** `host[:port]`; `defaultPort` null: the port is required. */
function hostPort(s: string, defaultPort: number | null): { host: string; port: number } | null {
  const close = s.lastIndexOf(']');
  const colon = s.lastIndexOf(':');
  const hasPort = colon > close;
  const hostText = hasPort ? s.slice(0, colon) : s;
  const portText = hasPort ? s.slice(colon + 1) : '';
  let port: number;
  if (portText === '') {
    if (defaultPort === null) return null;
    port = defaultPort;
  } else {
    if (!/^[0-9]{1,5}$/.test(portText)) return null;
    port = Number(portText);
    if (port < 1 || port > 65535) return null;
  }
  const host = targetHost(hostText);
  return host === null ? null : { host, port };
}

type Target = { host: string; port: number; path: string };

function parseTarget(method: string, target: string): Target | RequestHeadError {
  if (method === 'CONNECT') {
    const hp = hostPort(target, null);
    return hp === null ? 'bad_target' : { ...hp, path: '' };
  }
  if (target.startsWith('/') || target === '*') return 'not_a_proxy_request';
  if (target.slice(0, 7).toLowerCase() !== 'http://') return 'bad_target';
  const rest = target.slice(7);
  if (rest.includes('#')) return 'bad_target';
  let cut = rest.length;
  for (const sep of ['/', '?']) {
    const i = rest.indexOf(sep);
    if (i !== -1 && i < cut) cut = i;
  }
  const authority = rest.slice(0, cut);
  if (authority.includes('@') || authority === '') return 'bad_target';
  const hp = hostPort(authority, 80);
  if (hp === null) return 'bad_target';
  const tail = rest.slice(cut);
  const path = tail === '' ? '/' : tail.startsWith('?') ? `/${tail}` : tail;
  return { ...hp, path };
}

function decodeBasic(value: string): { username: string; password: string } | null {
  const m = /^basic[ \t]+([^ \t]+)[ \t]*$/i.exec(value);
  if (m === null || !BASE64.test(m[1] as string)) return null;
  const text = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon === -1) return null;
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

function framingOf(headers: readonly [string, string][], connect: boolean): BodyFraming | RequestHeadError {
  let te: string | null = null;
  let cl: string | null = null;
  for (const [n, v] of headers) {
    const l = n.toLowerCase();
    if (l === 'transfer-encoding') te = te === null ? v : `${te},${v}`;
    else if (l === 'content-length') cl = cl === null ? v : `${cl},${v}`;
  }
  if (connect) return { kind: 'none' };
  if (te !== null) {
    if (cl !== null) return 'bad_framing';
    const codings = te.split(',').map((c) => c.trim().toLowerCase());
    return codings[codings.length - 1] === 'chunked' ? { kind: 'chunked' } : 'bad_framing';
  }
  if (cl === null) return { kind: 'none' };
  let n = -1;
  for (const part of cl.split(',')) {
    const p = part.trim();
    if (!DIGITS.test(p) || (n !== -1 && Number(p) !== n)) return 'bad_framing';
    n = Number(p);
  }
  return n === 0 ? { kind: 'none' } : { kind: 'length', length: n };
}

function parseHead(text: string, maxHeaders: number): ProxyRequestHead | RequestHeadError {
  const lines = text.split('\n').map(stripCr);
  let i = 0;
  while (i < lines.length && lines[i] === '') i++;
  const m = REQUEST_LINE.exec(lines[i] ?? '');
  if (m === null) return 'bad_request_line';
  const method = m[1] as string;
  const target = parseTarget(method, m[2] as string);
  if (typeof target === 'string') return target;
  const headers: [string, string][] = [];
  for (i++; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') break;
    const c0 = line.charCodeAt(0);
    if (c0 === 32 || c0 === 9) return 'bad_header';
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) return 'bad_header';
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (CTL_IN_VALUE.test(value)) return 'bad_header';
    if (headers.length === maxHeaders) return 'too_many_headers';
    headers.push([name, value]);
  }
  const connect = method === 'CONNECT';
  const framing = framingOf(headers, connect);
  if (typeof framing === 'string') return framing;
  let auth: ProxyRequestHead['auth'] = 'none';
  let credentials: ProxyRequestHead['credentials'] = null;
  let expectsContinue = false;
  for (const [n, v] of headers) {
    const l = n.toLowerCase();
    if (l === 'expect' && v.toLowerCase() === '100-continue') expectsContinue = true;
    if (l !== 'proxy-authorization') continue;
    if (auth !== 'none') {
      auth = 'malformed';
      credentials = null;
      continue;
    }
    if (/^basic[ \t]/i.test(v)) {
      credentials = decodeBasic(v);
      auth = credentials === null ? 'malformed' : 'basic';
    } else {
      auth = TOKEN.test(v.split(/[ \t]/)[0] ?? '') ? 'other' : 'malformed';
    }
  }
  return {
    method,
    connect,
    host: target.host,
    port: target.port,
    path: target.path,
    version: m[3] === '0' ? '1.0' : '1.1',
    headers,
    auth,
    credentials,
    framing,
    expectsContinue,
  };
}
