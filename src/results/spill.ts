/**
 * The result writer's file I/O: the spill files records go to while a job
 * runs (`Spill`: buffered appends, one write chain), the coalescing output
 * of the final file (`Out`), and the two copies that build it from the
 * spills: the working records in sorted, memory-bounded batches
 * (`copySorted`, planned by src/results/working-index.ts) and the failed
 * spill as bytes (`copyBytes`). Errors here are plain I/O errors (or
 * `spill_short`); the writer wraps them as `result_write_failed`.
 */
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { RECORD_SEPARATOR } from './result-json';
import { SEPARATOR_BYTES, type WorkingIndex } from './working-index';

/** Read and write unit: 1 MiB. */
export const CHUNK = 1 << 20;
const RESOLVED: Promise<void> = Promise.resolve();
const SEPARATOR = Buffer.from(RECORD_SEPARATOR);

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) throw new ServiceError(DOMAIN_ERROR_CODES.SPILL_NO_PROGRESS, 'write made no progress');
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

export const closeQuietly = (fh: FileHandle | undefined): Promise<void> =>
  fh === undefined ? RESOLVED : fh.close().catch(() => undefined); // already closed or failing
export const unlinkQuietly = (path: string): Promise<void> => unlink(path).catch(() => undefined); // absent already

/** Coalesces small output pieces into large writes. */
export class Out {
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

/** An append-only spill file: text is buffered and written `flushBytes` at a time, in order. */
export class Spill {
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

const short = (what: string) => new ServiceError(DOMAIN_ERROR_CODES.SPILL_SHORT, `${what} spill file is short`);

/**
 * The working records of `spill` (one `<json>\n` each, positions in `index`)
 * in sorted order, each after its separator (the first one after just the
 * newline); at most `budget` bytes of records in memory. `step` runs after
 * each batch (the writer's abort check).
 */
export async function copySorted(out: Out, spill: Spill, index: WorkingIndex, budget: number, step: () => void): Promise<void> {
  const fh = spill.fh!;
  const chunk = Buffer.allocUnsafe(CHUNK);
  let first = true;
  for (const { bytes, records, dest, byFile } of index.batches(budget)) {
    const batch = Buffer.allocUnsafe(bytes);
    let chunkStart = 0;
    let chunkLen = 0;
    for (let q = 0; q < records.length; q++) {
      const j = byFile[q]!;
      const rec = records[j]!;
      const off = index.offset(rec);
      const len = index.length(rec);
      const at = dest[j]!;
      SEPARATOR.copy(batch, at);
      if (len > CHUNK) {
        if ((await readAt(fh, batch, at + SEPARATOR_BYTES, len, off)) !== len) throw short('working');
        continue;
      }
      if (off < chunkStart || off + len > chunkStart + chunkLen) {
        chunkStart = off;
        chunkLen = await readAt(fh, chunk, 0, CHUNK, off);
        if (chunkLen < len) throw short('working');
      }
      chunk.copy(batch, at + SEPARATOR_BYTES, off - chunkStart, off - chunkStart + len);
    }
    await out.put(first ? batch.subarray(1) : batch); // the first record: no comma
    first = false;
    step();
  }
}

/** The bytes of `spill` from `from` to its end, 1 MiB at a time; `step` runs after each piece. */
export async function copyBytes(out: Out, spill: Spill, from: number, step: () => void): Promise<void> {
  const fh = spill.fh!;
  const total = spill.size;
  let position = from;
  while (position < total) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, total - position));
    const got = await readAt(fh, buf, 0, buf.length, position);
    if (got !== buf.length) throw short('failed');
    await out.put(buf);
    position += got;
    step();
  }
}
