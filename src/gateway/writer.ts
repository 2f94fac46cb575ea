/**
 * What the gateway writes to one socket, with backpressure (part of the
 * relay: docs/DESIGN.md "Gateway"). Bun's native sockets take what the
 * kernel takes and report how much; the rest is kept here and written on
 * `drain`, and while anything is kept the socket the bytes were read from
 * is paused, so the relay holds at most about one chunk per direction
 * however fast one side sends and however slowly the other reads.
 *
 * `end()` asks for a FIN once everything kept is written (half-close: the
 * socket stays readable). Strings are written as latin1 (the heads the
 * gateway builds keep header bytes as the parsers read them).
 */

/** The part of a Bun socket the gateway drives. */
export interface Sock {
  write(data: Uint8Array): number;
  shutdown(halfClose?: boolean): void;
  end(): void;
  terminate(): void;
  pause(): void;
  resume(): void;
}

export class Writer {
  readonly #sock: Sock;
  readonly #onFinished: () => void;
  #out: Buffer | null = null;
  #source: Sock | null = null;
  #fin = false;
  #finSent = false;
  #dead = false;

  /** `onFinished`: called once the FIN asked for by end() went out. */
  constructor(sock: Sock, onFinished: () => void = () => {}) {
    this.#sock = sock;
    this.#onFinished = onFinished;
  }

  /** Bytes kept, waiting for the socket to drain. */
  get buffered(): number {
    return this.#out === null ? 0 : this.#out.length;
  }

  /** A FIN was asked for and everything before it is written. */
  get finished(): boolean {
    return this.#finSent;
  }

  /** `from`: the socket these bytes were read from; paused while they wait. */
  write(data: Buffer | string, from: Sock | null = null): void {
    if (this.#dead || this.#fin) return;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    if (bytes.length === 0) return;
    if (this.#out !== null) {
      this.#out = Buffer.concat([this.#out, bytes]);
      this.#hold(from);
      return;
    }
    const n = this.#sock.write(bytes);
    if (n < bytes.length) {
      this.#out = bytes.subarray(Math.max(0, n));
      this.#hold(from);
    }
  }

  /** The socket can take more (its `drain` event). */
  drain(): void {
    const out = this.#out;
    if (out === null || this.#dead) return;
    const n = this.#sock.write(out);
    if (n < out.length) {
      this.#out = out.subarray(Math.max(0, n));
      return;
    }
    this.#out = null;
    const src = this.#source;
    this.#source = null;
    src?.resume();
    if (this.#fin) this.#sendFin();
  }

  /** FIN once everything kept is written. */
  end(): void {
    if (this.#fin || this.#dead) return;
    this.#fin = true;
    if (this.#out === null) this.#sendFin();
  }

  /** The socket is gone: drop what is kept, let the source read again. */
  kill(): void {
    this.#dead = true;
    this.#out = null;
    const src = this.#source;
    this.#source = null;
    src?.resume();
  }

  #hold(from: Sock | null): void {
    if (from === null || this.#source === from) return;
    this.#source = from;
    from.pause();
  }

  #sendFin(): void {
    if (this.#finSent) return;
    this.#finSent = true;
    this.#sock.shutdown();
    this.#onFinished();
  }
}
