/**
 * The messages between the embedded database's thread (db/pglite-host.ts,
 * which owns the PGlite instance) and its client on the main thread
 * (db/pglite-thread.ts), and the few pure helpers both ends share: what an
 * error looks like on the wire, and the parsers drizzle asks for.
 *
 * Every request carries an id; the host answers each with exactly one Reply
 * of that id. Queries inside a transaction carry the transaction's id (`tx`,
 * 0 outside one). Values cross by structured clone (bigint, Date,
 * Uint8Array, plain objects and arrays survive it); functions do not, so a
 * query's parsers travel as the list of type OIDs whose parser is the
 * identity (the only kind drizzle-orm/pglite passes), rebuilt by the host.
 *
 * Pure: types and functions, no I/O.
 */
import type { Results, RowMode } from '@electric-sql/pglite';
import type { WireError } from '../src/errors';
import type { PgliteModules } from './pglite-instance';

/** How the host opens PGlite: a data dir or memory, from a template's bytes or not. */
export interface OpenSpec {
  /** The data dir (`${DATA_DIR}/pglite`); null = in memory. */
  dataDir: string | null;
  /** A dumpDataDir() tarball to start a new database from (gzipped or not). */
  template: ArrayBuffer | null;
  /** PGlite's WASM modules compiled on the main thread (db/pglite-instance.ts compiledPgliteModules); null: the host compiles them. */
  modules: PgliteModules | null;
  /** A new data dir (initdb or template): the host collects initdb's garbage after it opened. */
  collectGarbage: boolean;
}

export type Request =
  | { op: 'open'; id: number; spec: OpenSpec }
  | { op: 'query'; id: number; tx: number; sql: string; params: unknown[]; rowMode: RowMode; identityParsers: number[]; paramTypes?: number[] }
  | { op: 'exec'; id: number; tx: number; sql: string }
  /** Opens a transaction (BEGIN); answers its id. */
  | { op: 'begin'; id: number }
  /** Ends transaction `tx`: COMMIT (commit true) or ROLLBACK. */
  | { op: 'end'; id: number; tx: number; commit: boolean }
  | { op: 'dump'; id: number; compression: 'none' | 'gzip' }
  /** Closes PGlite (a clean shutdown of its postgres: a checkpoint of a data dir). */
  | { op: 'close'; id: number };

/** A dumpDataDir() tarball as bytes (a Blob is rebuilt on the main thread). */
export interface DumpValue {
  bytes: ArrayBuffer;
  type: string;
}

export type Reply = { id: number; ok: true; value?: Results | Results[] | number | DumpValue } | { id: number; ok: false; error: WireError };

/**
 * A database error thrown in the PGlite thread, rebuilt on the main thread
 * with the same name, message and fields (`code`, `constraint`, `detail`, ...),
 * so code that branches on PostgreSQL's error fields reads it as before.
 */
export class PgliteThreadError extends Error {
  [field: string]: unknown;

  constructor(wire: WireError) {
    super(wire.message);
    Object.assign(this, wire.fields);
    this.name = wire.name;
    // the thread's stack says where PGlite failed; the caller's is lost across the message
    if (wire.stack !== undefined) this.stack = wire.stack;
  }
}

/**
 * The type OIDs of a query's parsers when every one is the identity (what
 * drizzle-orm/pglite passes: timestamps, dates, intervals and their arrays
 * kept as text); anything else cannot cross a thread and is refused.
 */
export function identityParserOids(parsers: Readonly<Record<number, (value: string, typeId: number) => unknown>> | undefined): number[] {
  if (parsers === undefined) return [];
  const oids: number[] = [];
  for (const [key, parse] of Object.entries(parsers)) {
    const oid = Number(key);
    const probe = `probe-${oid}`;
    if (!Number.isInteger(oid) || typeof parse !== 'function' || parse(probe, oid) !== probe) {
      throw new TypeError(`PGlite thread: the parser of type ${key} is not the identity; only identity parsers cross to the database thread`);
    }
    oids.push(oid);
  }
  return oids;
}

/** The parsers object for a list of identity OIDs (the host's side of identityParserOids). */
export function identityParsers(oids: readonly number[]): Record<number, (value: string) => string> {
  const out: Record<number, (value: string) => string> = {};
  for (const oid of oids) out[oid] = identity;
  return out;
}

function identity(value: string): string {
  return value;
}
