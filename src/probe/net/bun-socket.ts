/**
 * The native link (src/probe/net/exchange-types.ts Link) for plain TCP under Bun:
 * Bun's own socket handle (the one behind Bun.connect) driven by a small,
 * shared handler table, without node:net's streams and events.
 *
 * Why not Bun.connect itself: it hands the socket out only on `open`, so a
 * connect that is never answered (a proxy that drops SYNs) cannot be
 * aborted; its fd and SYN retries would outlive the probe's budget by up to
 * the kernel's ~2 minutes. node:net's `connect()` creates the same native
 * handle up front (so `terminate()` cancels a pending connect at once, as
 * the probe budget requires) and takes its handler table from a per-socket
 * property; this link puts its own table there before connecting. Native
 * events then arrive straight here: no Readable/Writable machinery, no
 * 'connect'/'data'/'end'/'close' emits, no stream destroy path.
 *
 * That property is a Bun internal (`Symbol(khandlers)` on net.Socket), so
 * `nativeLinkAvailable` checks its shape once at load; when it is missing
 * (another runtime or another Bun) the exchange uses node-socket.ts instead.
 * test/integration/bun-socket.test.ts pins the behaviour this relies on.
 *
 * TLS for pinned exchanges (the https check): `startTls` upgrades the native
 * handle with Bun's own `upgradeTLS` (public API of Bun's sockets), its
 * events on a second shared table, the session to resume offered with
 * `setSession` in `open`. From then on the raw handle still reports the
 * ciphertext to the first table: those events are dropped. The certificate
 * is not verified here (the exchange compares the pin); TLS verified against
 * a CA stays on the node link (node:tls checks the hostname; see exchange.ts).
 * Native writes are not buffered by the runtime: what the kernel does not
 * take at once is kept and written on `drain`.
 */
import { constants as cryptoConstants } from 'node:crypto';
import { isIP, Socket as NetSocket } from 'node:net';
import type { PresentedCertificate } from '../types';
import { fingerprintOfDer, formatSubject } from '../codec/cert-pin';
import type { Link, LinkEvents, TlsStart } from './exchange-types';

/** The native socket handle as the handlers see it (a subset of Bun's Socket). */
interface NativeHandle {
  data: { self: NetSocket } | undefined;
  /** the socket's own address (Bun asks the OS: getsockname) */
  readonly localAddress?: string;
  write(data: string | Uint8Array): number;
  terminate(): void;
  upgradeTLS(o: { data: BunLink; tls: Record<string, unknown>; socket: typeof TLS_HANDLERS }): [unknown, TlsHandle];
}

/** The TLS socket upgradeTLS makes (a subset of Bun's TLSSocket). */
interface TlsHandle {
  data: BunLink;
  write(data: string | Uint8Array): number;
  terminate(): void;
  setSession(session: Buffer): void;
  getSession(): Buffer | undefined;
  isSessionReused(): boolean;
  getPeerCertificate(): { raw?: Buffer; subject?: unknown } | null | undefined;
}

/** Pinned TLS is TLS 1.2 at most (exchange-types.ts TlsStart.pinned). */
const NO_TLS_1_3: number = cryptoConstants.SSL_OP_NO_TLSv1_3;

const kLink = Symbol('bunLink');
type Carrier = NetSocket & { [kLink]: BunLink | undefined };

function linkOf(h: NativeHandle): BunLink | undefined {
  const self = h.data?.self as Carrier | undefined;
  return self === undefined ? undefined : self[kLink];
}

/** The link of a raw handle's event while it carries plain TCP (after startTls its events are the TLS socket's). */
function plainLinkOf(h: NativeHandle): BunLink | undefined {
  const l = linkOf(h);
  return l === undefined || l.tls !== null ? undefined : l;
}

/** One table for every native link (Bun reads it per connect). */
const HANDLERS = Object.freeze({
  open(h: NativeHandle): void {
    linkOf(h)?.opened(h);
  },
  data(h: NativeHandle, chunk: Buffer): void {
    plainLinkOf(h)?.received(chunk);
  },
  drain(h: NativeHandle): void {
    plainLinkOf(h)?.drained();
  },
  end(h: NativeHandle): void {
    plainLinkOf(h)?.ended();
  },
  close(h: NativeHandle, err?: Error): void {
    // a close with an error is a reset (as node:net reports it: 'error' first), not an EOF
    const l = plainLinkOf(h);
    if (l === undefined) return;
    if (err !== undefined && err !== null) l.errored(err);
    else l.ended();
  },
  error(h: NativeHandle, err: Error): void {
    plainLinkOf(h)?.errored(err);
  },
  connectError(h: NativeHandle, err: Error): void {
    linkOf(h)?.errored(err);
  },
  timeout(): void {},
});

/** The link of a TLS socket's event, while it is that link's. */
function tlsLinkOf(t: TlsHandle): BunLink | undefined {
  const l = t.data;
  return l !== undefined && l.tls === t && !l.closed ? l : undefined;
}

/** One table for every native link's TLS socket (upgradeTLS). */
const TLS_HANDLERS = Object.freeze({
  open(t: TlsHandle): void {
    // before any write: the session to resume, if the exchange has one
    const l = t.data;
    if (l?.offer !== null && l?.offer !== undefined) t.setSession(l.offer);
  },
  handshake(t: TlsHandle, ok: boolean, err: Error | null): void {
    const l = tlsLinkOf(t);
    if (l === undefined) return;
    // Bun says not ok both when the handshake failed (not TLS, no common cipher: no peer
    // certificate) and for some chains that did not verify (a certificate was presented). The
    // chain does not matter here: the exchange compares the pin (or trusts a resumed session).
    if (ok || l.sessionReused() || l.peerCertificate() !== null) l.handshaken();
    else l.errored(err ?? new Error('TLS handshake failed'));
  },
  data(t: TlsHandle, chunk: Buffer): void {
    tlsLinkOf(t)?.received(chunk);
  },
  drain(t: TlsHandle): void {
    tlsLinkOf(t)?.drained();
  },
  end(t: TlsHandle): void {
    tlsLinkOf(t)?.ended();
  },
  close(t: TlsHandle, err?: Error): void {
    const l = tlsLinkOf(t);
    if (l === undefined) return;
    if (err !== undefined && err !== null) l.errored(err);
    else l.ended();
  },
  error(t: TlsHandle, err: Error): void {
    tlsLinkOf(t)?.errored(err);
  },
  timeout(): void {},
});

function findHandlersSymbol(): symbol | null {
  if (typeof (globalThis as { Bun?: unknown }).Bun === 'undefined') return null;
  try {
    const probe = new NetSocket();
    const sym = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'khandlers') ?? null;
    const table = sym === null ? null : (probe as unknown as Record<symbol, unknown>)[sym];
    probe.destroy();
    if (table === null || typeof table !== 'object') return null;
    const t = table as Record<string, unknown>;
    for (const k of ['open', 'data', 'drain', 'end', 'close', 'error', 'connectError']) if (typeof t[k] !== 'function') return null;
    return sym;
  } catch {
    return null;
  }
}

const kHandlers = findHandlersSymbol();

/** True when this runtime offers the native handle the way this link needs it. */
export const nativeLinkAvailable: boolean = kHandlers !== null;

function noop(): void {}

class BunLink implements Link {
  readonly ev: LinkEvents;
  private readonly sock: Carrier;
  private handle: NativeHandle | null = null;
  /** the TLS socket once startTls ran (then the raw handle's events are dropped) */
  tls: TlsHandle | null = null;
  /** the session to offer in the TLS socket's `open` */
  offer: Buffer | null = null;
  private out: Buffer | null = null;
  closed = false;

  constructor(ev: LinkEvents, ip: string, port: number) {
    this.ev = ev;
    const s = new NetSocket() as Carrier;
    s[kLink] = this;
    (s as unknown as Record<symbol, unknown>)[kHandlers as symbol] = HANDLERS;
    // node:net reports synchronous connect failures as an 'error' event; never let one go unheard
    s.on('error', noop);
    this.sock = s;
    s.connect({ host: ip, port });
  }

  opened(h: NativeHandle): void {
    this.handle = h;
    try {
      this.ev.connected();
    } catch (e) {
      this.ev.abort(e);
    }
  }

  received(chunk: Buffer): void {
    try {
      this.ev.data(chunk);
    } catch (e) {
      this.ev.abort(e);
    }
  }

  handshaken(): void {
    try {
      this.ev.secured();
    } catch (e) {
      this.ev.abort(e);
    }
  }

  ended(): void {
    try {
      this.ev.ended();
    } catch (e) {
      this.ev.abort(e);
    }
  }

  errored(err: Error): void {
    try {
      this.ev.errored(err);
    } catch (e) {
      this.ev.abort(e);
    }
  }

  /** Where writes go: the TLS socket once there is one, else the raw handle. */
  private sink(): { write(data: string | Uint8Array): number } | null {
    return this.closed ? null : (this.tls ?? this.handle);
  }

  write(data: string | Buffer): void {
    const h = this.sink();
    if (h === null) return;
    if (this.out !== null) {
      this.out = Buffer.concat([this.out, typeof data === 'string' ? Buffer.from(data, 'latin1') : data]);
      return;
    }
    const n = h.write(data);
    if (n < data.length) {
      const b = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
      this.out = b.subarray(Math.max(0, n));
    }
  }

  drained(): void {
    const h = this.sink();
    const out = this.out;
    if (h === null || out === null) return;
    const n = h.write(out);
    this.out = n >= out.length ? null : out.subarray(Math.max(0, n));
  }

  startTls(t: TlsStart): void {
    const h = this.handle;
    if (h === null || this.closed) return;
    if (!t.pinned) throw new Error('the native link starts pinned TLS only; TLS verified against a CA uses the node link');
    this.offer = t.session ?? null;
    this.out = null; // nothing plain is left to send once TLS starts (the exchange waits for each answer)
    const [, tls] = h.upgradeTLS({
      data: this,
      // the certificate is compared by the exchange (pinned): any chain is accepted here; TLS 1.2 at most (TlsStart.pinned)
      tls: { rejectUnauthorized: false, secureOptions: NO_TLS_1_3, ...(isIP(t.host) === 0 ? { serverName: t.host } : {}) },
      socket: TLS_HANDLERS,
    });
    this.tls = tls;
  }

  peerCertificate(): PresentedCertificate | null {
    const t = this.tls;
    if (t === null || this.closed) return null;
    try {
      const c = t.getPeerCertificate();
      const raw = c?.raw;
      if (raw === undefined || raw === null || raw.length === 0) return null;
      return { subject: formatSubject(c?.subject), fingerprint: fingerprintOfDer(raw) };
    } catch {
      return null;
    }
  }

  sessionReused(): boolean {
    const t = this.tls;
    if (t === null) return false;
    try {
      return t.isSessionReused();
    } catch {
      return false;
    }
  }

  tlsSession(): Buffer | null {
    const t = this.tls;
    if (t === null || this.closed) return null;
    try {
      return t.getSession() ?? null;
    } catch {
      return null;
    }
  }

  localAddress(): string | null {
    const h = this.handle;
    if (h === null || this.closed) return null;
    try {
      const a = h.localAddress;
      return typeof a === 'string' && a !== '' ? a : null;
    } catch {
      return null; // an address we cannot learn must not fail the probe
    }
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.out = null;
    this.offer = null;
    const t = this.tls;
    // the handle exists from connect() on, so this also cancels a connect still in progress
    const h = (this.sock as unknown as { _handle: NativeHandle | null })._handle ?? this.handle;
    this.sock[kLink] = undefined;
    t?.terminate();
    h?.terminate();
  }
}

/** Dial over the native handle (Dial in exchange-types). Only when nativeLinkAvailable. Throws on an invalid port. */
export function dialBun(ev: LinkEvents, ip: string, port: number): Link {
  return new BunLink(ev, ip, port);
}
