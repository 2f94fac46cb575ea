/**
 * The portable link (src/probe/net/exchange-types.ts Link) over node:net, with
 * TLS through node:tls on top of the connected socket. Used for every
 * exchange that needs TLS (https judge, https custom URLs through CONNECT or
 * a SOCKS tunnel) and as the fallback when the native link
 * (src/probe/net/bun-socket.ts) is unavailable or switched off.
 *
 * Listeners are shared module-level functions that find their link through a
 * symbol property, so a connection allocates no per-socket closures.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { PresentedCertificate } from '../types';
import { fingerprintOfDer, formatSubject } from '../codec/cert-pin';
import type { Link, LinkEvents } from './exchange-types';

const kLink = Symbol('nodeLink');
type Carrier = { [kLink]: NodeLink };

/** Makes `s` carry `link` and its events to the shared listeners; `opened`: its connect (or TLS handshake) event. */
function carry(s: Socket, link: NodeLink, opened: 'connect' | 'secureConnect', onOpened: (this: Socket) => void): void {
  (s as unknown as Carrier)[kLink] = link;
  s.on(opened, onOpened);
  s.on('data', onData);
  s.on('end', onEnd);
  s.on('close', onEnd);
  s.on('error', onError);
}

class NodeLink implements Link {
  private readonly ev: LinkEvents;
  private readonly raw: Socket;
  private secure: TLSSocket | null = null;

  constructor(ev: LinkEvents, ip: string, port: number) {
    this.ev = ev;
    const s = netConnect({ host: ip, port, noDelay: true });
    this.raw = s;
    carry(s, this, 'connect', onConnect);
  }

  write(data: string | Buffer): void {
    if (typeof data === 'string') (this.secure ?? this.raw).write(data, 'latin1');
    else (this.secure ?? this.raw).write(data);
  }

  startTls(host: string, ca: string | undefined, pinned = false): void {
    const raw = this.raw;
    // the raw socket now only carries TLS records: its events belong to the TLS socket
    raw.removeListener('data', onData);
    raw.removeListener('end', onEnd);
    raw.removeListener('close', onEnd);
    const t = tlsConnect({
      socket: raw,
      host,
      servername: isIP(host) === 0 ? host : undefined,
      // pinned: the certificate is self-signed and compared by fingerprint after the handshake (exchange.ts)
      ...(pinned ? { rejectUnauthorized: false } : { ca }),
      ALPNProtocols: ['http/1.1'],
    });
    this.secure = t;
    carry(t, this, 'secureConnect', onSecure);
  }

  peerCertificate(): PresentedCertificate | null {
    const t = this.secure;
    if (t === null) return null;
    try {
      const c = t.getPeerCertificate();
      const raw = c?.raw;
      if (raw === undefined || raw === null || raw.length === 0) return null;
      // the DER's own hash (not the runtime's fingerprint256 string): one definition of the fingerprint
      return { subject: formatSubject(c.subject), fingerprint: fingerprintOfDer(raw) };
    } catch {
      return null;
    }
  }

  destroy(): void {
    if (this.secure !== null) this.secure.destroy();
    this.raw.destroy();
  }

  localAddress(): string | null {
    try {
      // the TCP socket's own address (TLS runs on top of it). Under Bun the
      // handle's own getter costs one getsockname, cached; node:net's
      // `localAddress` costs three. Elsewhere `_handle` has no such getter.
      const h = (this.raw as unknown as { _handle?: { localAddress?: unknown } | null })._handle;
      const a = typeof h?.localAddress === 'string' ? h.localAddress : this.raw.localAddress;
      return typeof a === 'string' && a !== '' ? a : null;
    } catch {
      return null; // an address we cannot learn must not fail the probe
    }
  }

  event(kind: number, arg: unknown): void {
    const ev = this.ev;
    try {
      switch (kind) {
        case CONNECT:
          ev.connected();
          return;
        case DATA:
          ev.data(arg as Buffer);
          return;
        case END:
          ev.ended();
          return;
        case ERROR:
          ev.errored(arg as Error);
          return;
        default:
          ev.secured();
      }
    } catch (e) {
      ev.abort(e);
    }
  }
}

const CONNECT = 0;
const DATA = 1;
const END = 2;
const ERROR = 3;
const SECURE = 4;

function onConnect(this: Socket): void {
  (this as unknown as Carrier)[kLink].event(CONNECT, undefined);
}
function onSecure(this: Socket): void {
  (this as unknown as Carrier)[kLink].event(SECURE, undefined);
}
function onData(this: Socket, chunk: Buffer): void {
  (this as unknown as Carrier)[kLink].event(DATA, chunk);
}
function onEnd(this: Socket): void {
  (this as unknown as Carrier)[kLink].event(END, undefined);
}
function onError(this: Socket, err: Error): void {
  (this as unknown as Carrier)[kLink].event(ERROR, err);
}

/** Dial over node:net (Dial in exchange-types). Throws on an invalid port. */
export function dialNode(ev: LinkEvents, ip: string, port: number): Link {
  return new NodeLink(ev, ip, port);
}
