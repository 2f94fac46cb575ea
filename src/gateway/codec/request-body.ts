/**
 * Where a forwarded request's body ends, found incrementally in the bytes the
 * client sends after the head (pure). The gateway relays the body bytes as
 * they are (chunked stays chunked) and nothing after it: a pipelined second
 * request would otherwise reach the upstream unparsed, with the client's
 * Proxy-Authorization (its API key) in it.
 *
 * push(chunk) answers which part of the chunk is body (`body`, to relay),
 * and once the body is complete (`done`) the bytes after it (`rest`, which
 * the driver drops: one request per connection). Any split of the same
 * stream gives the same body bytes and the same end.
 *
 * Chunked (RFC 9112 7.1): size lines of hex digits (extensions after ";"
 * ignored, at most MAX_LINE bytes), data, CRLF (a bare LF accepted), the
 * last chunk "0", then trailer lines up to an empty line. Anything else is
 * `error: 'bad_chunk'`.
 *
 * States of the chunked reader: SIZE -> DATA -> DATA_END -> SIZE ...;
 * SIZE "0" -> TRAILERS -> DONE; any -> ERROR.
 */
import type { BodyFraming } from './request-head';

export interface BodyStep {
  /** The part of the chunk that belongs to the body (relay it). */
  body: Buffer;
  /** The body is complete. */
  done: boolean;
  /** With `done`: the bytes after the body in this chunk (empty when none). */
  rest: Buffer;
  error: 'bad_chunk' | null;
}

const MAX_LINE = 4096;
const EMPTY = Buffer.alloc(0);

const Chunked = Object.freeze({ SIZE: 0, DATA: 1, DATA_END: 2, TRAILERS: 3, DONE: 4, ERROR: 5 } as const);
type ChunkedState = (typeof Chunked)[keyof typeof Chunked];

export class RequestBodyFramer {
  #kind: BodyFraming['kind'];
  #remaining: number;
  #state: ChunkedState = Chunked.SIZE;
  #line = '';
  #lineLen = 0;
  #sawCr = false;

  constructor(framing: BodyFraming) {
    this.#kind = framing.kind;
    this.#remaining = framing.kind === 'length' ? framing.length : 0;
  }

  /** True once the body is complete (at once for a request without one). */
  get done(): boolean {
    if (this.#kind === 'none') return true;
    if (this.#kind === 'length') return this.#remaining === 0;
    return this.#state === Chunked.DONE;
  }

  push(chunk: Buffer): BodyStep {
    if (this.done) return { body: EMPTY, done: true, rest: chunk, error: null };
    if (this.#kind === 'length') {
      const n = Math.min(this.#remaining, chunk.length);
      this.#remaining -= n;
      return { body: chunk.subarray(0, n), done: this.#remaining === 0, rest: this.#remaining === 0 ? chunk.subarray(n) : EMPTY, error: null };
    }
    return this.#chunked(chunk);
  }

  #chunked(chunk: Buffer): BodyStep {
    if (this.#state === Chunked.ERROR) return { body: EMPTY, done: false, rest: EMPTY, error: 'bad_chunk' };
    let pos = 0;
    while (pos < chunk.length && this.#state !== Chunked.DONE) {
      switch (this.#state) {
        case Chunked.SIZE:
        case Chunked.TRAILERS: {
          const lf = chunk.indexOf(10, pos);
          const stop = lf === -1 ? chunk.length : lf;
          this.#lineLen += stop - pos;
          if (this.#lineLen > MAX_LINE) return this.#fail();
          this.#line += chunk.toString('latin1', pos, stop);
          pos = lf === -1 ? chunk.length : lf + 1;
          if (lf !== -1 && !this.#endLine()) return this.#fail();
          break;
        }
        case Chunked.DATA: {
          const n = Math.min(this.#remaining, chunk.length - pos);
          this.#remaining -= n;
          pos += n;
          if (this.#remaining === 0) {
            this.#state = Chunked.DATA_END;
            this.#sawCr = false;
          }
          break;
        }
        case Chunked.DATA_END: {
          const c = chunk[pos++];
          if (c === 13 && !this.#sawCr) this.#sawCr = true;
          else if (c === 10) this.#state = Chunked.SIZE;
          else return this.#fail();
          break;
        }
      }
    }
    const done = this.#state === Chunked.DONE;
    return { body: chunk.subarray(0, pos), done, rest: done ? chunk.subarray(pos) : EMPTY, error: null };
  }

  /** A complete size or trailer line; false when it is not a valid one. */
  #endLine(): boolean {
    const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
    this.#line = '';
    this.#lineLen = 0;
    if (this.#state === Chunked.TRAILERS) {
      if (line === '') this.#state = Chunked.DONE;
      return true;
    }
    const semi = line.indexOf(';');
    const size = (semi === -1 ? line : line.slice(0, semi)).trim();
    if (!/^[0-9a-fA-F]{1,15}$/.test(size)) return false;
    this.#remaining = parseInt(size, 16);
    this.#state = this.#remaining === 0 ? Chunked.TRAILERS : Chunked.DATA;
    return true;
  }

  #fail(): BodyStep {
    this.#state = Chunked.ERROR;
    return { body: EMPTY, done: false, rest: EMPTY, error: 'bad_chunk' };
  }
}
