/**
 * Streaming result-file writer: `{summary, metadata, proxies,
 * custom_url_validation?}` for jobs of up to 100 000+ proxies, in bounded
 * memory (DECISIONS "Responses and files": `proxies` = working ones by
 * response time ascending, then failed ones).
 *
 * ## How
 *
 * While the job runs, `addProxy(record)` appends each record's JSON to one of
 * two spill files beside the target (buffered, `flushBytes` at a time):
 * - working: `<json>\n`, and in memory only {responseTime, offset, length}
 *   (typed arrays, 20 bytes per working record);
 * - failed:  `,\n<json>`, in arrival order (never sorted, never read back
 *   into memory as a whole).
 * `finish({summary, metadata, custom_url_validation?})` then writes
 * `<path>.<rand>.tmp`: the header, the working records in sorted order, the
 * failed spill copied as bytes, the custom-URL block and `}`; fsyncs it
 * (option), renames it over `path` atomically and deletes the spill files.
 *
 * Sorting: the working index is sorted (stable: equal times keep arrival
 * order; the time is the record's own `responseTime` string, so the order is
 * exactly what readers see). Records are then copied out in batches of at
 * most `sortMemoryBytes` (default 32 MiB): for each batch the working spill is
 * read sequentially in 1 MiB chunks and the batch's records are placed at
 * their output positions in one buffer. One batch (one read of the spill)
 * covers ~80 000 typical records; more working data costs extra sequential
 * passes, never more memory. Memory bound of a writer: 20 B x working records
 * + sortMemoryBytes + 2 MiB of I/O buffers + the pending spill buffer.
 *
 * `custom_url_validation` may be a plain value (JSON.stringify) or a
 * `JsonChunkSource` (`toJsonChunks()` yielding the JSON text in pieces, see
 * CustomUrlFold.jsonChunks) so huge per-URL lists are never one string.
 *
 * ## States
 *
 * OPEN -> FINISHING -> FINISHED, or -> FAILED (an I/O error: every file of the
 * writer is removed, the error is rethrown with code `result_write_failed`
 * and `cause`), or -> ABORTED (`abort()`, idempotent: waits for in-flight
 * writes, closes, removes spill and temp files; a `finish()` still running
 * then rejects with `writer_aborted` and leaves no file; once `finish()` has
 * resolved, abort is a no-op and the result file stays). Backpressure: `addProxy` returns a promise that
 * resolves at once unless it started a spill write, then when that write is
 * done; await it and a slow disk slows the producer instead of growing memory.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isResultId } from './links';
import type { ProxyRecord } from './record';

export const WRITER_STATES = Object.freeze({
  OPEN: 'open',
  FINISHING: 'finishing',
  FINISHED: 'finished',
  FAILED: 'failed',
  ABORTED: 'aborted',
} as const);
export type WriterState = (typeof WRITER_STATES)[keyof typeof WRITER_STATES];

export class ResultWriterError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ResultWriterError';
    this.code = code;
  }
}

/** A value serialised piecewise: the concatenated chunks are its JSON text. */
export interface JsonChunkSource {
  toJsonChunks(): Iterable<string>;
}

export interface FinishInput {
  summary: unknown;
  metadata: unknown;
  custom_url_validation?: unknown;
}

export interface ResultWriterOptions {
  /** Largest batch of working records placed in memory while sorting. Default 32 MiB. */
  sortMemoryBytes?: number;
  /** Spill buffer size before a write. Default 256 KiB. */
  flushBytes?: number;
  /** fsync the result file before the rename. Default true. */
  fsync?: boolean;
}

export interface FinishStats {
  working: number;
  failed: number;
  bytes: number;
}

export interface ResultWriter {
  readonly path: string;
  readonly state: WriterState;
  readonly working: number;
  readonly failed: number;
  addProxy(record: ProxyRecord): Promise<void>;
  finish(input: FinishInput): Promise<FinishStats>;
  abort(): Promise<void>;
}

/** `<dataDir>/results/<resultId>.json`; refuses anything that is not a result id. */
export function resultFilePath(dataDir: string, resultId: string): string {
  if (!isResultId(resultId)) throw new ResultWriterError('result_bad_id', `not a result id: ${JSON.stringify(resultId)}`);
  return join(dataDir, 'results', `${resultId}.json`);
}

const CHUNK = 1 << 20;
const RESOLVED: Promise<void> = Promise.resolve();

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) throw new Error('write made no progress');
    off += bytesWritten;
  }
}

async function readAt(fh: FileHandle, buf: Buffer, at: number, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, at + got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

const closeQuietly = (fh: FileHandle | undefined): Promise<void> =>
  fh === undefined ? RESOLVED : fh.close().catch(() => undefined); // already closed or failing
const unlinkQuietly = (path: string): Promise<void> => unlink(path).catch(() => undefined); // absent already

/** Coalesces small output pieces into large writes. */
class Out {
  private parts: Buffer[] = [];
  private size = 0;
  bytes = 0;
  constructor(private readonly fh: FileHandle) {}
  async put(data: string | Buffer): Promise<void> {
    const b = typeof data === 'string' ? Buffer.from(data) : data;
    this.bytes += b.length;
    if (b.length >= CHUNK) {
      await this.flush();
      await writeAll(this.fh, b);
      return;
    }
    this.parts.push(b);
    this.size += b.length;
    if (this.size >= CHUNK) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.size === 0) return;
    const b = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    await writeAll(this.fh, b);
  }
}

class Spill {
  fh: FileHandle | undefined;
  private parts: string[] = [];
  private pendingBytes = 0;
  /** Bytes handed to the file so far (buffered ones included). */
  size = 0;
  private chain: Promise<void> = RESOLVED;
  constructor(readonly path: string) {}

  async open(): Promise<void> {
    this.fh = await open(this.path, 'w+');
  }

  /** Returns the write promise when this append started a flush. */
  append(text: string, bytes: number, flushBytes: number): Promise<void> | undefined {
    this.parts.push(text);
    this.pendingBytes += bytes;
    this.size += bytes;
    return this.pendingBytes >= flushBytes ? this.flush() : undefined;
  }

  flush(): Promise<void> {
    if (this.parts.length > 0) {
      const data = Buffer.from(this.parts.join(''));
      this.parts = [];
      this.pendingBytes = 0;
      const fh = this.fh!;
      this.chain = this.chain.then(() => writeAll(fh, data));
    }
    return this.chain;
  }

  /** Waits for every started write; never rejects (errors surfaced by flush()). */
  settled(): Promise<void> {
    return this.chain.catch(() => undefined);
  }
}

class Writer implements ResultWriter {
  state: WriterState = WRITER_STATES.OPEN;
  working = 0;
  failed = 0;
  private times = new Float64Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private readonly work: Spill;
  private readonly fail: Spill;
  private readonly tmpPath: string;
  private outFh: FileHandle | undefined;
  private finishing: Promise<FinishStats> | undefined;
  private aborting: Promise<void> | undefined;
  private ioError: unknown;

  constructor(
    readonly path: string,
    private readonly opts: Required<ResultWriterOptions>,
  ) {
    const tag = randomBytes(6).toString('hex');
    this.work = new Spill(`${path}.${tag}.working.tmp`);
    this.fail = new Spill(`${path}.${tag}.failed.tmp`);
    this.tmpPath = `${path}.${tag}.tmp`;
  }

  async init(): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await this.work.open();
      await this.fail.open();
    } catch (err) {
      await this.cleanup(false);
      throw new ResultWriterError('result_write_failed', `cannot open spill files for ${this.path}`, { cause: err });
    }
  }

  addProxy(record: ProxyRecord): Promise<void> {
    if (this.state !== WRITER_STATES.OPEN) {
      return Promise.reject(new ResultWriterError('writer_closed', `result writer is ${this.state}`));
    }
    if (this.ioError !== undefined) return Promise.reject(this.wrap(this.ioError));
    const json = JSON.stringify(record);
    let started: Promise<void> | undefined;
    if (record.status === 'working') {
      const len = Buffer.byteLength(json);
      const i = this.working++;
      if (i === this.times.length) this.grow();
      const t = Number.parseFloat(record.responseTime);
      this.times[i] = Number.isFinite(t) ? t : Number.POSITIVE_INFINITY;
      this.offsets[i] = this.work.size;
      this.lengths[i] = len;
      started = this.work.append(`${json}\n`, len + 1, this.opts.flushBytes);
    } else {
      this.failed++;
      const text = `,\n${json}`;
      started = this.fail.append(text, Buffer.byteLength(text), this.opts.flushBytes);
    }
    if (started === undefined) return RESOLVED;
    return started.catch((err) => {
      this.ioError ??= err;
      throw this.wrap(err);
    });
  }

  finish(input: FinishInput): Promise<FinishStats> {
    if (this.state !== WRITER_STATES.OPEN) {
      return Promise.reject(new ResultWriterError('writer_closed', `result writer is ${this.state}`));
    }
    this.state = WRITER_STATES.FINISHING;
    this.finishing = this.doFinish(input).catch(async (err) => {
      const aborted = this.state === WRITER_STATES.ABORTED;
      if (!aborted) this.state = WRITER_STATES.FAILED;
      await this.cleanup(false);
      if (aborted) throw new ResultWriterError('writer_aborted', 'result writer was aborted', { cause: err });
      throw this.wrap(err);
    });
    return this.finishing;
  }

  abort(): Promise<void> {
    if (this.state === WRITER_STATES.FINISHED) return RESOLVED;
    this.aborting ??= (async () => {
      const wasFailed = this.state === WRITER_STATES.FAILED;
      this.state = WRITER_STATES.ABORTED;
      if (this.finishing !== undefined) await this.finishing.catch(() => undefined);
      if (!wasFailed) await this.cleanup(false);
    })();
    return this.aborting;
  }

  private wrap(err: unknown): ResultWriterError {
    if (err instanceof ResultWriterError) return err;
    return new ResultWriterError('result_write_failed', `writing ${this.path} failed`, { cause: err });
  }

  private checkAborted(): void {
    if (this.state === WRITER_STATES.ABORTED) throw new ResultWriterError('writer_aborted', 'result writer was aborted');
  }

  private grow(): void {
    const n = this.times.length * 2;
    this.times = grown(this.times, new Float64Array(n));
    this.offsets = grown(this.offsets, new Float64Array(n));
    this.lengths = grown(this.lengths, new Uint32Array(n));
  }

  private async doFinish(input: FinishInput): Promise<FinishStats> {
    await this.work.flush();
    await this.fail.flush();
    this.checkAborted();
    this.outFh = await open(this.tmpPath, 'w');
    const out = new Out(this.outFh);
    await out.put(`{"summary":${JSON.stringify(input.summary ?? null)},"metadata":${JSON.stringify(input.metadata ?? null)},"proxies":[`);
    await this.copyWorking(out);
    await this.copyFailed(out);
    await out.put(this.working + this.failed > 0 ? '\n]' : ']');
    const cuv = input.custom_url_validation;
    if (cuv !== undefined) {
      await out.put(',"custom_url_validation":');
      if (isChunkSource(cuv)) {
        for (const piece of cuv.toJsonChunks()) {
          await out.put(piece);
          this.checkAborted();
        }
      } else {
        await out.put(JSON.stringify(cuv));
      }
    }
    await out.put('}\n');
    await out.flush();
    if (this.opts.fsync) await this.outFh.sync();
    await this.outFh.close();
    this.outFh = undefined;
    this.checkAborted();
    await rename(this.tmpPath, this.path);
    if (this.state === WRITER_STATES.ABORTED) {
      // abort() was called while the rename ran: abort wins, the file goes
      await unlinkQuietly(this.path);
      this.checkAborted();
    }
    this.state = WRITER_STATES.FINISHED;
    await this.cleanup(true);
    return { working: this.working, failed: this.failed, bytes: out.bytes };
  }

  /** Working records in (time, arrival) order, in memory-bounded batches. */
  private async copyWorking(out: Out): Promise<void> {
    const n = this.working;
    if (n === 0) return;
    const times = this.times;
    const lengths = this.lengths;
    const perm = new Uint32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    perm.sort((a, b) => times[a]! - times[b]! || a - b);
    const fh = this.work.fh!;
    const chunk = Buffer.allocUnsafe(CHUNK);
    let first = true;
    let pos = 0;
    while (pos < n) {
      // the batch perm[pos, end): at least one record, at most sortMemoryBytes
      let end = pos;
      let bytes = 0;
      while (end < n) {
        const need = lengths[perm[end]!]! + 2;
        if (end > pos && bytes + need > this.opts.sortMemoryBytes) break;
        bytes += need;
        end++;
      }
      const k = end - pos;
      const dest = new Float64Array(k);
      for (let j = 0, at = 0; j < k; j++) {
        dest[j] = at;
        at += lengths[perm[pos + j]!]! + 2;
      }
      const byFile = new Uint32Array(k);
      for (let j = 0; j < k; j++) byFile[j] = j;
      byFile.sort((a, b) => perm[pos + a]! - perm[pos + b]!);
      const batch = Buffer.allocUnsafe(bytes);
      let chunkStart = 0;
      let chunkLen = 0;
      for (let q = 0; q < k; q++) {
        const j = byFile[q]!;
        const rec = perm[pos + j]!;
        const off = this.offsets[rec]!;
        const len = lengths[rec]!;
        const at = dest[j]!;
        batch[at] = 0x2c; // ','
        batch[at + 1] = 0x0a; // '\n'
        if (len > CHUNK) {
          if ((await readAt(fh, batch, at + 2, len, off)) !== len) throw new Error('working spill file is short');
          continue;
        }
        if (off < chunkStart || off + len > chunkStart + chunkLen) {
          chunkStart = off;
          chunkLen = await readAt(fh, chunk, 0, CHUNK, off);
          if (chunkLen < len) throw new Error('working spill file is short');
        }
        chunk.copy(batch, at + 2, off - chunkStart, off - chunkStart + len);
      }
      await out.put(first ? batch.subarray(1) : batch);
      first = false;
      pos = end;
      this.checkAborted();
    }
  }

  /** The failed spill as bytes; its first "," goes when no working record precedes it. */
  private async copyFailed(out: Out): Promise<void> {
    if (this.failed === 0) return;
    const fh = this.fail.fh!;
    const total = this.fail.size;
    let position = this.working === 0 ? 1 : 0;
    while (position < total) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, total - position));
      const got = await readAt(fh, buf, 0, buf.length, position);
      if (got !== buf.length) throw new Error('failed spill file is short');
      await out.put(buf);
      position += got;
      this.checkAborted();
    }
  }

  private async cleanup(keepResult: boolean): Promise<void> {
    await Promise.all([this.work.settled(), this.fail.settled()]);
    await Promise.all([closeQuietly(this.work.fh), closeQuietly(this.fail.fh), closeQuietly(this.outFh)]);
    this.work.fh = undefined;
    this.fail.fh = undefined;
    this.outFh = undefined;
    const paths = [this.work.path, this.fail.path];
    if (!keepResult) paths.push(this.tmpPath);
    await Promise.all(paths.map(unlinkQuietly));
  }
}

function grown<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function isChunkSource(v: unknown): v is JsonChunkSource {
  return typeof v === 'object' && v !== null && typeof (v as JsonChunkSource).toJsonChunks === 'function';
}

/** Opens the spill files (creating the directory of `path`) and returns the writer. */
export async function openResultWriter(path: string, options: ResultWriterOptions = {}): Promise<ResultWriter> {
  const opts: Required<ResultWriterOptions> = {
    sortMemoryBytes: Math.max(1, options.sortMemoryBytes ?? 32 << 20),
    flushBytes: Math.max(1, options.flushBytes ?? 256 << 10),
    fsync: options.fsync ?? true,
  };
  const w = new Writer(path, opts);
  await w.init();
  return w;
}
