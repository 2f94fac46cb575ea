/**
 * A socket link's events, recorded (src/probe/net/exchange-types.ts
 * LinkEvents): what the link tests (bun-socket, tls-links) drive a link
 * with, in place of an exchange. `onConnected` runs on `connected` (to write,
 * or start TLS, once the socket is up).
 */
import type { LinkEvents } from '../../src/probe/net/exchange-types';

export class LinkRecorder implements LinkEvents {
  log: string[] = [];
  bytes: Buffer[] = [];
  errors: Error[] = [];
  onConnected: () => void = () => {};
  connected(): void {
    this.log.push('connected');
    this.onConnected();
  }
  data(chunk: Buffer): void {
    this.log.push('data');
    this.bytes.push(chunk);
  }
  ended(): void {
    this.log.push('ended');
  }
  errored(err: Error): void {
    this.log.push('errored');
    this.errors.push(err);
  }
  secured(): void {
    this.log.push('secured');
  }
  abort(e: unknown): void {
    this.log.push(`abort ${String(e)}`);
  }
}
