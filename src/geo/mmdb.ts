/**
 * A minimal MaxMind DB (MMDB v2) reader over bytes already in memory (pure, no
 * I/O: the caller maps or reads the file). It walks the binary search tree
 * with plain byte reads and decodes data records into plain JS values.
 *
 * Why not mmdb-lib's Reader: it needs a Node Buffer, parses the address text
 * on every call and rebuilds the record object on every call; this reader
 * takes pre-parsed address words and lets the caller cache records by their
 * data offset (many addresses share one city record), which keeps a lookup
 * well under a microsecond once warm.
 *
 * Format: https://maxmind.github.io/MaxMind-DB/ (search tree of `nodeCount`
 * nodes, two records of `recordSize` bits each; a record equal to nodeCount
 * means "no data"; above it, a pointer into the data section that starts 16
 * bytes after the tree).
 */
import { ServiceError } from '../errors';
import { LEAF_ERROR_CODES } from '../error-codes';

export type MmdbValue = string | number | bigint | boolean | Uint8Array | MmdbValue[] | { [key: string]: MmdbValue };

export interface MmdbMetadata {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
  databaseType: string;
  buildEpoch: number;
}

const badFile = (message: string) => new ServiceError(LEAF_ERROR_CODES.GEO_BAD_MMDB, message);

const METADATA_MARKER = [0xab, 0xcd, 0xef, 0x4d, 0x61, 0x78, 0x4d, 0x69, 0x6e, 0x64, 0x2e, 0x63, 0x6f, 0x6d]; // "\xAB\xCD\xEFMaxMind.com"
const utf8 = new TextDecoder();

/** Decodes MMDB data-section values; `base` is where pointers count from. */
class Decoder {
  constructor(
    private readonly b: Uint8Array,
    private readonly base: number,
  ) {}

  /** Decode the value at absolute offset `at`; returns [value, offset after it]. */
  decode(at: number): [MmdbValue, number] {
    const b = this.b;
    if (at >= b.length) throw badFile(`data offset ${at} outside the file`);
    const ctrl = b[at]!;
    let p = at + 1;
    let type = ctrl >> 5;
    if (type === 1) {
      // pointer
      const ss = (ctrl >> 3) & 3;
      const vvv = ctrl & 7;
      let ptr: number;
      if (ss === 0) ptr = vvv * 256 + b[p]!;
      else if (ss === 1) ptr = (vvv * 65536 + b[p]! * 256 + b[p + 1]!) + 2048;
      else if (ss === 2) ptr = (vvv * 16777216 + b[p]! * 65536 + b[p + 1]! * 256 + b[p + 2]!) + 526336;
      else ptr = b[p]! * 16777216 + b[p + 1]! * 65536 + b[p + 2]! * 256 + b[p + 3]!;
      const [value] = this.decode(this.base + ptr);
      return [value, p + ss + 1];
    }
    if (type === 0) {
      type = 7 + b[p]!;
      p++;
    }
    let size = ctrl & 0x1f;
    if (size >= 29) {
      if (size === 29) {
        size = 29 + b[p]!;
        p += 1;
      } else if (size === 30) {
        size = 285 + b[p]! * 256 + b[p + 1]!;
        p += 2;
      } else {
        size = 65821 + b[p]! * 65536 + b[p + 1]! * 256 + b[p + 2]!;
        p += 3;
      }
    }
    switch (type) {
      case 2: // utf8 string
        return [utf8.decode(b.subarray(p, p + size)), p + size];
      case 3: // double
        return [new DataView(b.buffer, b.byteOffset + p, 8).getFloat64(0), p + 8];
      case 4: // bytes
        return [b.slice(p, p + size), p + size];
      case 5: // uint16
      case 6: // uint32
      case 8: {
        // int32
        let n = 0;
        for (let k = 0; k < size; k++) n = n * 256 + b[p + k]!;
        if (type === 8 && size === 4 && n >= 0x80000000) n -= 0x100000000;
        return [n, p + size];
      }
      case 9: // uint64
      case 10: {
        // uint128
        let n = 0n;
        for (let k = 0; k < size; k++) n = (n << 8n) | BigInt(b[p + k]!);
        return [n, p + size];
      }
      case 7: {
        // map
        const out: { [key: string]: MmdbValue } = {};
        for (let k = 0; k < size; k++) {
          const [key, afterKey] = this.decode(p);
          const [value, afterValue] = this.decode(afterKey);
          out[String(key)] = value;
          p = afterValue;
        }
        return [out, p];
      }
      case 11: {
        // array
        const out: MmdbValue[] = [];
        for (let k = 0; k < size; k++) {
          const [value, after] = this.decode(p);
          out.push(value);
          p = after;
        }
        return [out, p];
      }
      case 14: // boolean
        return [size !== 0, p];
      case 15: // float
        return [new DataView(b.buffer, b.byteOffset + p, 4).getFloat32(0), p + 4];
      default:
        throw badFile(`unsupported MMDB data type ${type} at offset ${at}`);
    }
  }
}

function findMetadataStart(b: Uint8Array): number {
  const m = METADATA_MARKER;
  const stop = Math.max(0, b.length - 128 * 1024);
  outer: for (let i = b.length - m.length; i >= stop; i--) {
    for (let k = 0; k < m.length; k++) if (b[i + k] !== m[k]) continue outer;
    return i + m.length;
  }
  throw badFile('MMDB metadata marker not found');
}

/** The reader: `find*` return a data offset (or -1), `record` decodes one. */
export class MmdbReader {
  readonly metadata: MmdbMetadata;
  private readonly b: Uint8Array;
  private readonly nodeCount: number;
  private readonly treeSize: number;
  private readonly dataDecoder: Decoder;
  private readonly ipv4Start: number;

  constructor(bytes: Uint8Array) {
    this.b = bytes;
    const metaStart = findMetadataStart(bytes);
    const [meta] = new Decoder(bytes, metaStart).decode(metaStart);
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || meta instanceof Uint8Array) {
      throw badFile('MMDB metadata is not a map');
    }
    const nodeCount = meta['node_count'];
    const recordSize = meta['record_size'];
    const ipVersion = meta['ip_version'];
    if (typeof nodeCount !== 'number' || (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) || (ipVersion !== 4 && ipVersion !== 6)) {
      throw badFile('MMDB metadata lacks node_count / record_size / ip_version');
    }
    const epoch = meta['build_epoch'];
    this.metadata = {
      nodeCount,
      recordSize,
      ipVersion,
      databaseType: String(meta['database_type'] ?? ''),
      buildEpoch: typeof epoch === 'bigint' ? Number(epoch) : typeof epoch === 'number' ? epoch : 0,
    };
    this.nodeCount = nodeCount;
    this.treeSize = (recordSize * 2 / 8) * nodeCount;
    if (this.treeSize + 16 > metaStart) throw badFile('MMDB search tree larger than the file');
    this.dataDecoder = new Decoder(bytes, this.treeSize + 16);
    let node = 0;
    if (ipVersion === 6) {
      for (let i = 0; i < 96 && node < nodeCount; i++) node = this.left(node);
    }
    this.ipv4Start = node;
  }

  private left(node: number): number {
    const b = this.b;
    switch (this.metadata.recordSize) {
      case 24: {
        const o = node * 6;
        return b[o]! * 65536 + b[o + 1]! * 256 + b[o + 2]!;
      }
      case 28: {
        const o = node * 7;
        return (b[o + 3]! >> 4) * 16777216 + b[o]! * 65536 + b[o + 1]! * 256 + b[o + 2]!;
      }
      case 32: {
        const o = node * 8;
        return b[o]! * 16777216 + b[o + 1]! * 65536 + b[o + 2]! * 256 + b[o + 3]!;
      }
    }
  }

  private right(node: number): number {
    const b = this.b;
    switch (this.metadata.recordSize) {
      case 24: {
        const o = node * 6 + 3;
        return b[o]! * 65536 + b[o + 1]! * 256 + b[o + 2]!;
      }
      case 28: {
        const o = node * 7;
        return (b[o + 3]! & 15) * 16777216 + b[o + 4]! * 65536 + b[o + 5]! * 256 + b[o + 6]!;
      }
      case 32: {
        const o = node * 8 + 4;
        return b[o]! * 16777216 + b[o + 1]! * 65536 + b[o + 2]! * 256 + b[o + 3]!;
      }
    }
  }

  /** Walk `bits` bits of `word` starting at `node`; returns the node/record reached. */
  private walk(node: number, word: number, bits: number): number {
    const n = this.nodeCount;
    for (let i = bits - 1; i >= 0 && node < n; i--) {
      node = (word >>> i) & 1 ? this.right(node) : this.left(node);
    }
    return node;
  }

  private toOffset(record: number): number {
    if (record <= this.nodeCount) return -1; // == nodeCount: no data; < nodeCount: tree ended early (malformed)
    return record - this.nodeCount + this.treeSize; // absolute offset of the data record
  }

  /** Data offset for an IPv4 address (uint32), or -1 when the database has nothing for it. */
  findV4(n: number): number {
    return this.toOffset(this.walk(this.ipv4Start, n, 32));
  }

  /** Data offset for an IPv6 address (four 32-bit words), or -1. Needs an IPv6 database. */
  findV6(w: Uint32Array): number {
    if (this.metadata.ipVersion !== 6) return -1;
    let node = 0;
    for (let k = 0; k < 4 && node < this.nodeCount; k++) node = this.walk(node, w[k]!, 32);
    return this.toOffset(node);
  }

  /** Decode the record at a data offset returned by find*. */
  record(offset: number): MmdbValue {
    return this.dataDecoder.decode(offset)[0];
  }
}
