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
 * No TLS here: exchanges that need TLS use the node link (see exchange.ts).
 * Native writes are not buffered by the runtime: what the kernel does not
 * take at once is kept and written on `drain`.
 */
import { Socket as NetSocket } from 'node:net';
import type { Link, LinkEvents } from './exchange-types';

/** The native socket handle as the handlers see it (a subset of Bun's Socket). */
interface NativeHandle {
  data: { self: NetSocket } | undefined;
  /** the socket's own address (Bun asks the OS: getsockname) */
  readonly localAddress?: string;
  write(data: string | Uint8Array): number;
  terminate(): void;
}

const kLink = Symbol('bunLink');
type Carrier = NetSocket & { [kLink]: BunLink | undefined };

function linkOf(h: NativeHandle): BunLink | undefined {
  const self = h.data?.self as Carrier | undefined;
  return self === undefined ? undefined : self[kLink];
}

/** One table for every native link (Bun reads it per connect). */
const HANDLERS = Object.freeze({
  open(h: NativeHandle): void {
    linkOf(h)?.opened(h);
  },
  data(h: NativeHandle, chunk: Buffer): void {
    const l = linkOf(h);
    if (l === undefined) return;
    try {
      l.ev.data(chunk);
    } catch (e) {
      l.ev.abort(e);
    }
  },
  drain(h: NativeHandle): void {
    linkOf(h)?.drained();
  },
  end(h: NativeHandle): void {
    linkOf(h)?.ended();
  },
  close(h: NativeHandle, err?: Error): void {
    // a close with an error is a reset (as node:net reports it: 'error' first), not an EOF
    const l = linkOf(h);
    if (l === undefined) return;
    if (err !== undefined && err !== null) l.errored(err);
    else l.ended();
  },
  error(h: NativeHandle, err: Error): void {
    linkOf(h)?.errored(err);
  },
  connectError(h: NativeHandle, err: Error): void {
    linkOf(h)?.errored(err);
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
  private out: Buffer | null = null;
  private closed = false;

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

  write(data: string | Buffer): void {
    const h = this.handle;
    if (h === null || this.closed) return;
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
    const h = this.handle;
    const out = this.out;
    if (h === null || out === null || this.closed) return;
    const n = h.write(out);
    this.out = n >= out.length ? null : out.subarray(Math.max(0, n));
  }

  startTls(): void {
    throw new Error('the native link has no TLS; exchanges with TLS use the node link');
  }

  peerCertificate(): null {
    return null; // no TLS on this link
  }

  sessionReused(): boolean {
    return false;
  }

  tlsSession(): null {
    return null;
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
    // the handle exists from connect() on, so this also cancels a connect still in progress
    const h = (this.sock as unknown as { _handle: NativeHandle | null })._handle ?? this.handle;
    this.sock[kLink] = undefined;
    h?.terminate();
  }
}

/** Dial over the native handle (Dial in exchange-types). Only when nativeLinkAvailable. Throws on an invalid port. */
export function dialBun(ev: LinkEvents, ip: string, port: number): Link {
  return new BunLink(ev, ip, port);
}
