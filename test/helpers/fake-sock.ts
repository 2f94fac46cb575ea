/**
 * A fake of the socket the gateway drives (src/gateway/writer.ts Sock, and
 * setNoDelay for an upstream leg): it takes every byte written and records
 * shutdown (FIN), end, terminate (reset) and pause; for the gateway's
 * driver tests without daemons.
 */
import type { Sock } from '../../src/gateway/writer';

export class FakeSock implements Sock {
  out: Buffer[] = [];
  shut = false;
  ended = false;
  terminated = false;
  paused = false;
  noDelay = false;

  write(d: Uint8Array): number {
    this.out.push(Buffer.from(d));
    return d.length;
  }
  shutdown(): void {
    this.shut = true;
  }
  end(): void {
    this.ended = true;
  }
  terminate(): void {
    this.terminated = true;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  setNoDelay(on = true): void {
    this.noDelay = on;
  }
  /** What was written since the last take, as latin1 text. */
  take(): string {
    const t = Buffer.concat(this.out).toString('latin1');
    this.out = [];
    return t;
  }
}
