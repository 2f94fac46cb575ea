/**
 * What a farm proxy (bench/farm/worker.ts) reads from a client before it
 * opens the tunnel, as a pure function of the bytes so far: HTTP
 * absolute-form (rewritten to origin-form) and CONNECT, SOCKS4/4a and SOCKS5
 * with or without username/password (the first byte decides). No sockets, no
 * timers: the worker writes the replies, keeps the stage and connects.
 *
 * Stages: HEAD (nothing read yet: HTTP head, SOCKS4 request or SOCKS5
 * greeting) -> SOCKS5_AUTH -> SOCKS5_REQ (SOCKS5 only). readClient answers
 * one of:
 *   more    the bytes so far are an incomplete message: wait for more;
 *   reply   SOCKS5 greeting / auth read: send `reply`, go on in `next` with
 *           `rest` (bytes the client sent ahead, or null);
 *   refuse  send `reply` and close (bad request, a target that is not
 *           loopback, an unsupported method or address type);
 *   tunnel  connect to host:port; once connected send `toClient` (the
 *           CONNECT / SOCKS success, null for absolute-form HTTP) and
 *           `toUpstream` (the rewritten request, or bytes sent ahead).
 * Targets must be loopback: anything else is refused (403 / SOCKS refusal).
 */

export const Stage = Object.freeze({ HEAD: 0, SOCKS5_AUTH: 1, SOCKS5_REQ: 2 } as const);
export type StageValue = (typeof Stage)[keyof typeof Stage];

export type Step =
  | { kind: 'more' }
  | { kind: 'reply'; reply: Buffer; next: StageValue; rest: Buffer | null }
  | { kind: 'refuse'; reply: Buffer | string; refusedTarget: boolean }
  | { kind: 'tunnel'; host: string; port: number; toClient: Buffer | null; toUpstream: Buffer };

/** An HTTP head larger than this without its end is refused (431). */
export const HEAD_MAX = 16 * 1024;

const MORE: Step = Object.freeze({ kind: 'more' });

export function isLoopbackTarget(host: string): boolean {
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '[::1]';
}

/** An empty HTTP answer with `status` (e.g. "502 Bad Gateway"), closing the connection. */
export function httpErrorReply(status: string): string {
  return `HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}

/** What the client gets when the tunnel's target cannot be reached, by the success reply it was to get. */
export function connectFailedReply(toClient: Buffer | null): Buffer | string {
  if (toClient === null || toClient[0] === 0x48) return httpErrorReply('502 Bad Gateway'); // HTTP ("H...")
  // SOCKS: general failure
  return toClient[0] === 0x05 ? Buffer.from([5, 1, 0, 1, 0, 0, 0, 0, 0, 0]) : Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]);
}

/** Reads what the client sent so far (`buf`: every byte not yet consumed) in `stage`. */
export function readClient(stage: StageValue, buf: Buffer): Step {
  if (stage === Stage.HEAD) {
    const b0 = buf[0];
    if (b0 === 0x05) return socks5Greeting(buf);
    if (b0 === 0x04) return socks4(buf);
    return httpHead(buf);
  }
  if (stage === Stage.SOCKS5_AUTH) return socks5Auth(buf);
  return socks5Request(buf);
}

const refuse = (reply: Buffer | string, refusedTarget = false): Step => ({ kind: 'refuse', reply, refusedTarget });

function httpHead(buf: Buffer): Step {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return buf.length > HEAD_MAX ? refuse(httpErrorReply('431 Request Header Fields Too Large')) : MORE;
  const head = buf.toString('latin1', 0, end);
  const rest = buf.subarray(end + 4);
  const lines = head.split('\r\n');
  const [method, target, version] = (lines[0] ?? '').split(' ');
  if (method === undefined || target === undefined || version === undefined) return refuse(httpErrorReply('400 Bad Request'));
  let host: string;
  let port: number;
  let toClient: Buffer | null = null;
  let toUpstream: Buffer;
  if (method === 'CONNECT') {
    const colon = target.lastIndexOf(':');
    host = target.slice(0, colon).replace(/^\[|\]$/g, '');
    port = Number(target.slice(colon + 1));
    toClient = Buffer.from('HTTP/1.1 200 Connection established\r\n\r\n');
    toUpstream = rest;
  } else {
    const m = /^http:\/\/(\[[^\]]+\]|[^/:]+)(?::(\d+))?(\/.*)?$/.exec(target);
    if (m === null) return refuse(httpErrorReply('400 Bad Request'));
    host = m[1]!.replace(/^\[|\]$/g, '');
    port = m[2] === undefined ? 80 : Number(m[2]);
    let out = `${method} ${m[3] ?? '/'} ${version}\r\n`;
    for (let i = 1; i < lines.length; i++) {
      const l = lines[i]!;
      const lower = l.slice(0, 17).toLowerCase();
      if (lower.startsWith('proxy-connection:') || lower.startsWith('proxy-authorizat')) continue;
      out += l + '\r\n';
    }
    out += '\r\n';
    toUpstream = rest.length > 0 ? Buffer.concat([Buffer.from(out, 'latin1'), rest]) : Buffer.from(out, 'latin1');
  }
  if (!isLoopbackTarget(host)) return refuse(httpErrorReply('403 Forbidden'), true);
  return { kind: 'tunnel', host, port, toClient, toUpstream };
}

function socks4(buf: Buffer): Step {
  if (buf.length < 9) return MORE;
  const nul = buf.indexOf(0, 8);
  if (nul === -1) return MORE;
  const port = buf.readUInt16BE(2);
  let host = `${buf[4]}.${buf[5]}.${buf[6]}.${buf[7]}`;
  let restAt = nul + 1;
  if (buf[4] === 0 && buf[5] === 0 && buf[6] === 0 && buf[7] !== 0) {
    // SOCKS4a: the host name follows the user id
    const nul2 = buf.indexOf(0, nul + 1);
    if (nul2 === -1) return MORE;
    host = buf.toString('latin1', nul + 1, nul2);
    restAt = nul2 + 1;
  }
  if (buf[1] !== 1 || !isLoopbackTarget(host)) return refuse(Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]));
  return { kind: 'tunnel', host, port, toClient: Buffer.from([0, 0x5a, 0, 0, 0, 0, 0, 0]), toUpstream: buf.subarray(restAt) };
}

function socks5Greeting(buf: Buffer): Step {
  if (buf.length < 2 || buf.length < 2 + buf[1]!) return MORE;
  const methods = buf.subarray(2, 2 + buf[1]!);
  const rest = buf.subarray(2 + buf[1]!);
  const ahead = rest.length > 0 ? rest : null;
  if (methods.includes(0)) return { kind: 'reply', reply: Buffer.from([5, 0]), next: Stage.SOCKS5_REQ, rest: ahead };
  if (methods.includes(2)) return { kind: 'reply', reply: Buffer.from([5, 2]), next: Stage.SOCKS5_AUTH, rest: ahead };
  return refuse(Buffer.from([5, 0xff]));
}

/** Username/password (RFC 1929): any credentials are accepted. */
function socks5Auth(buf: Buffer): Step {
  if (buf.length < 2) return MORE;
  const ul = buf[1]!;
  if (buf.length < 3 + ul) return MORE;
  const pl = buf[2 + ul]!;
  if (buf.length < 3 + ul + pl) return MORE;
  const rest = buf.subarray(3 + ul + pl);
  return { kind: 'reply', reply: Buffer.from([1, 0]), next: Stage.SOCKS5_REQ, rest: rest.length > 0 ? rest : null };
}

function socks5Request(buf: Buffer): Step {
  if (buf.length < 5) return MORE;
  const atyp = buf[3];
  let host: string;
  let at: number;
  if (atyp === 1) {
    if (buf.length < 10) return MORE;
    host = `${buf[4]}.${buf[5]}.${buf[6]}.${buf[7]}`;
    at = 8;
  } else if (atyp === 3) {
    const len = buf[4]!;
    if (buf.length < 5 + len + 2) return MORE;
    host = buf.toString('latin1', 5, 5 + len);
    at = 5 + len;
  } else if (atyp === 4) {
    if (buf.length < 22) return MORE;
    const parts: string[] = [];
    for (let i = 0; i < 8; i++) parts.push(buf.readUInt16BE(4 + i * 2).toString(16));
    host = parts.join(':');
    at = 20;
  } else {
    return refuse(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0])); // address type not supported
  }
  if (buf[1] !== 1 || !isLoopbackTarget(host)) return refuse(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
  return {
    kind: 'tunnel',
    host,
    port: buf.readUInt16BE(at),
    toClient: Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    toUpstream: buf.subarray(at + 2),
  };
}
