/**
 * Incremental HTTP/1.x response parser (pure, no I/O). Feed it Buffers as
 * they arrive (`push`), tell it about EOF (`end`); it reports a state from
 * ResponseState. Any split of the same byte stream gives the same result.
 *
 * Handles: status line (HTTP/1.0 and 1.1, reason optional), headers (raw
 * names and order kept, obs-fold joined), interim 1xx answers skipped,
 * bodyless statuses (204, 304, 1xx), Transfer-Encoding chunked (extensions
 * and trailers ignored), Content-Length (identical repeats allowed),
 * read-to-close. `headOnly` stops after the head (the answer to CONNECT);
 * bytes after it are kept in `rest`. The body is kept up to `bodyCap` bytes;
 * a message with more body than that ends early as DONE with
 * `bodyTruncated` set (the caller decides on what was read). With `onBody`
 * the body is handed over as it arrives (within the same cap) and not kept;
 * when onBody answers true the message ends there as DONE with `bodyStopped`.
 * Bare LF line endings are accepted; head size is bounded by `headMax`.
 */

export const ResponseState = Object.freeze({
  HEAD: 0,
  BODY_LENGTH: 1,
  CHUNK_SIZE: 2,
  CHUNK_DATA: 3,
  CHUNK_DATA_END: 4,
  TRAILERS: 5,
  BODY_CLOSE: 6,
  DONE: 7,
  ERROR: 8,
} as const);
export type ResponseStateValue = (typeof ResponseState)[keyof typeof ResponseState];

export type ResponseErrorCode =
  | 'bad_status_line'
  | 'bad_header'
  | 'head_too_large'
  | 'bad_framing'
  | 'bad_chunk'
  | 'truncated' // EOF before the message was complete
  | 'empty'; // EOF before any byte

export interface ResponseParserOptions {
  /** Body bytes kept at most; more ends the message with bodyTruncated. */
  bodyCap: number;
  /** Head bytes allowed (status line + headers, and trailers). Default 32 KiB. */
  headMax?: number;
  /** Stop after the head (response to CONNECT). */
  headOnly?: boolean;
  /** Body bytes go here instead of being kept; true = enough read, end the message now. */
  onBody?: ((chunk: Buffer) => boolean) | undefined;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.[0-9] ([0-9]{3})(?:[ \t].*)?$/;
const HEX = /^[0-9a-fA-F]{1,15}$/;
const MAX_LINE = 4096;
const HTTP_PREFIX: readonly number[] = Object.freeze([...'HTTP/'].map((c) => c.charCodeAt(0)));

export class HttpResponseParser {
  state: ResponseStateValue = ResponseState.HEAD;
  error: ResponseErrorCode | null = null;
  statusCode = 0;
  headers: [string, string][] = [];
  bodyTruncated = false;
  /** onBody said it had read enough: the message ended before its body did. */
  bodyStopped = false;
  /** headOnly: the bytes after the head (the first tunnel bytes); otherwise null. */
  rest: Buffer | null = null;

  private readonly bodyCap: number;
  private readonly headMax: number;
  private readonly headOnly: boolean;
  private readonly onBody: ((chunk: Buffer) => boolean) | undefined;
  private bytesSeen = 0;
  private headParts: Buffer[] = [];
  private headLen = 0;
  private lineLen = 0; // non-CR bytes in the current head line
  private sawContent = false; // a non-empty head line has started
  private prefixSeen = 0; // bytes of "HTTP/" matched at the start of the status line
  private remaining = 0;
  private bodyParts: Buffer[] = [];
  private bodyLen = 0;
  private line = ''; // chunk-size / trailer line being collected
  private sawCr = false;
  private trailerBytes = 0;

  constructor(opts: ResponseParserOptions) {
    this.bodyCap = opts.bodyCap;
    this.headMax = opts.headMax ?? 32768;
    this.headOnly = opts.headOnly === true;
    this.onBody = opts.onBody;
  }

  /** The body bytes kept (at most bodyCap). */
  body(): Buffer {
    if (this.bodyParts.length === 1) return this.bodyParts[0] as Buffer;
    if (this.bodyParts.length === 0) return Buffer.alloc(0);
    const b = Buffer.concat(this.bodyParts, this.bodyLen);
    this.bodyParts = [b];
    return b;
  }

  /** Lower-case lookup of the first header with this name. */
  header(lowerName: string): string | undefined {
    for (const [n, v] of this.headers) if (n.toLowerCase() === lowerName) return v;
    return undefined;
  }

  push(chunk: Buffer): ResponseStateValue {
    if (chunk.length === 0) return this.state;
    this.bytesSeen += chunk.length;
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.state) {
        case ResponseState.HEAD:
          pos = this.scanHead(chunk, pos);
          break;
        case ResponseState.BODY_LENGTH: {
          const n = Math.min(this.remaining, chunk.length - pos);
          this.remaining -= n;
          const end = pos + n;
          this.takeBody(chunk, pos, end);
          pos = end;
          if (this.remaining === 0 && this.state === ResponseState.BODY_LENGTH) this.state = ResponseState.DONE;
          break;
        }
        case ResponseState.CHUNK_SIZE:
        case ResponseState.TRAILERS:
          pos = this.scanLine(chunk, pos);
          break;
        case ResponseState.CHUNK_DATA: {
          const n = Math.min(this.remaining, chunk.length - pos);
          this.remaining -= n;
          const end = pos + n;
          this.takeBody(chunk, pos, end);
          pos = end;
          if (this.remaining === 0 && this.state === ResponseState.CHUNK_DATA) {
            this.state = ResponseState.CHUNK_DATA_END;
            this.sawCr = false;
          }
          break;
        }
        case ResponseState.CHUNK_DATA_END: {
          const c = chunk[pos++];
          if (c === 13 && !this.sawCr) this.sawCr = true;
          else if (c === 10) this.state = ResponseState.CHUNK_SIZE;
          else return this.fail('bad_chunk');
          break;
        }
        case ResponseState.BODY_CLOSE:
          this.takeBody(chunk, pos, chunk.length);
          pos = chunk.length;
          break;
        case ResponseState.DONE: {
          if (this.headOnly) {
            const extra = chunk.subarray(pos);
            this.rest = this.rest === null ? extra : Buffer.concat([this.rest, extra]);
          }
          return this.state;
        }
        default:
          return this.state;
      }
    }
    return this.state;
  }

  /** EOF from the peer. */
  end(): ResponseStateValue {
    if (this.state === ResponseState.BODY_CLOSE) this.state = ResponseState.DONE;
    else if (this.state !== ResponseState.DONE && this.state !== ResponseState.ERROR)
      this.fail(this.bytesSeen === 0 ? 'empty' : 'truncated');
    return this.state;
  }

  private fail(code: ResponseErrorCode): ResponseStateValue {
    this.error = code;
    this.state = ResponseState.ERROR;
    return this.state;
  }

  private takeBody(chunk: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) return;
    const room = this.bodyCap - this.bodyLen;
    if (n > room || (n === room && this.state === ResponseState.BODY_LENGTH && this.remaining > 0)) {
      if (room > 0) this.keepBody(chunk.subarray(start, start + room));
      if (this.state !== ResponseState.DONE) {
        this.bodyTruncated = true;
        this.state = ResponseState.DONE;
      }
      return;
    }
    this.keepBody(chunk.subarray(start, end));
  }

  private keepBody(part: Buffer): void {
    this.bodyLen += part.length;
    if (this.onBody === undefined) {
      this.bodyParts.push(part);
      return;
    }
    if (this.onBody(part)) {
      this.bodyStopped = true;
      this.state = ResponseState.DONE;
    }
  }

  /** Scans head bytes from pos; returns the position after what it consumed. */
  private scanHead(chunk: Buffer, pos: number): number {
    const start = pos;
    let endAt = -1;
    for (let i = pos; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (c === 10) {
        if (this.lineLen === 0 && this.sawContent) {
          endAt = i + 1;
          break;
        }
        if (this.sawContent && this.prefixSeen < HTTP_PREFIX.length) {
          this.fail('bad_status_line');
          return chunk.length;
        }
        this.lineLen = 0;
      } else if (c !== 13) {
        // the status line must start with "HTTP/": refuse junk at its first wrong byte
        if (this.prefixSeen < HTTP_PREFIX.length) {
          if (c !== HTTP_PREFIX[this.prefixSeen]) {
            this.fail('bad_status_line');
            return chunk.length;
          }
          this.prefixSeen++;
        }
        this.lineLen++;
        this.sawContent = true;
      }
    }
    const stop = endAt === -1 ? chunk.length : endAt;
    this.headLen += stop - start;
    if (this.headLen > this.headMax) {
      this.fail('head_too_large');
      return chunk.length;
    }
    this.headParts.push(chunk.subarray(start, stop));
    if (endAt === -1) return stop;
    const headBuf = this.headParts.length === 1 ? (this.headParts[0] as Buffer) : Buffer.concat(this.headParts);
    this.headParts = [];
    this.headLen = 0;
    this.lineLen = 0;
    this.sawContent = false;
    this.prefixSeen = 0;
    this.onHead(headBuf.toString('latin1'));
    if (this.state === ResponseState.DONE && stop < chunk.length && this.headOnly) {
      this.rest = chunk.subarray(stop);
      return chunk.length;
    }
    return stop;
  }

  private onHead(head: string): void {
    const lines = head.split('\n');
    let i = 0;
    while (i < lines.length && stripCr(lines[i] as string) === '') i++;
    const m = STATUS_LINE.exec(stripCr(lines[i] ?? ''));
    if (m === null) {
      this.fail('bad_status_line');
      return;
    }
    const status = Number(m[1]);
    const headers: [string, string][] = [];
    for (i++; i < lines.length; i++) {
      const line = stripCr(lines[i] as string);
      if (line === '') break;
      const c0 = line.charCodeAt(0);
      if (c0 === 32 || c0 === 9) {
        const last = headers[headers.length - 1];
        if (last === undefined) {
          this.fail('bad_header');
          return;
        }
        last[1] = (last[1] + ' ' + line.trim()).trim();
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) {
        this.fail('bad_header');
        return;
      }
      headers.push([name, line.slice(colon + 1).trim()]);
    }
    if (status >= 100 && status < 200 && status !== 101) return; // interim: parse the next head
    this.statusCode = status;
    this.headers = headers;
    if (this.headOnly || status === 101 || status === 204 || status === 304) {
      this.state = ResponseState.DONE;
      return;
    }
    let te: string | null = null;
    let cl: string | null = null;
    for (const [n, v] of headers) {
      const l = n.toLowerCase();
      if (l === 'transfer-encoding') te = te === null ? v : `${te},${v}`;
      else if (l === 'content-length') cl = cl === null ? v : `${cl},${v}`;
    }
    if (te !== null) {
      const codings = te.split(',');
      const last = (codings[codings.length - 1] as string).trim().toLowerCase();
      this.state = last === 'chunked' ? ResponseState.CHUNK_SIZE : ResponseState.BODY_CLOSE;
      this.line = '';
      return;
    }
    if (cl !== null) {
      let n = -1;
      for (const part of cl.split(',')) {
        const p = part.trim();
        if (!/^[0-9]{1,15}$/.test(p) || (n !== -1 && Number(p) !== n)) {
          this.fail('bad_framing');
          return;
        }
        n = Number(p);
      }
      this.remaining = n;
      this.state = n === 0 ? ResponseState.DONE : ResponseState.BODY_LENGTH;
      return;
    }
    this.state = ResponseState.BODY_CLOSE;
  }

  /** Collects a chunk-size or trailer line; returns the position after what it consumed. */
  private scanLine(chunk: Buffer, pos: number): number {
    const lf = chunk.indexOf(10, pos);
    const stop = lf === -1 ? chunk.length : lf;
    if (this.line.length + (stop - pos) > MAX_LINE) {
      this.fail(this.state === ResponseState.TRAILERS ? 'head_too_large' : 'bad_chunk');
      return chunk.length;
    }
    this.line += chunk.toString('latin1', pos, stop);
    if (lf === -1) return chunk.length;
    const line = stripCr(this.line);
    this.line = '';
    if (this.state === ResponseState.TRAILERS) {
      this.trailerBytes += line.length + 2;
      if (line === '') this.state = ResponseState.DONE;
      else if (this.trailerBytes > this.headMax) this.fail('head_too_large');
      return lf + 1;
    }
    const semi = line.indexOf(';');
    const sizeStr = (semi === -1 ? line : line.slice(0, semi)).trim();
    if (!HEX.test(sizeStr)) {
      this.fail('bad_chunk');
      return chunk.length;
    }
    const size = parseInt(sizeStr, 16);
    if (size === 0) {
      this.state = ResponseState.TRAILERS;
      this.trailerBytes = 0;
    } else {
      this.remaining = size;
      this.state = ResponseState.CHUNK_DATA;
    }
    return lf + 1;
  }
}

function stripCr(s: string): string {
  return s.length > 0 && s.charCodeAt(s.length - 1) === 13 ? s.slice(0, -1) : s;
}
