/**
 * A pool's proxies in its owner's memory (DECISIONS "Pools are actors"):
 * struct-of-arrays indexed by a dense slot number, no object per proxy. Pure
 * data and its conversions; the owner (src/jobs/pool-actor.ts) folds checks
 * into it (table-fold.ts), pages from it (proxy-page.ts) and flushes its
 * dirty slots (flush-sql.ts); an unlimited txt / csv listing reads its rows
 * from it as it writes them (proxy-listing.ts).
 *
 * Per proxy: the numbers in typed arrays (times as epoch ms, NaN for null;
 * codes -1 or 0 for null), the 153-byte history in one shared byte array
 * (slot i at i * HISTORY_BYTES), the address and the two free-text fields
 * (origin, error message) as plain strings, and the low-cardinality texts
 * (country, country name, location, isp, error code) as codes of one
 * Interner. Per capacity slot: 249 bytes of typed arrays and 5 string
 * references (40 bytes), 289 in all (test/unit/pools-table-fold.test.ts
 * counts them), plus the host's string, an origin that differs from the host
 * (one equal to it is the host's own string) and a failed proxy's error
 * message; capacity grows by half, so at most a third of it is idle.
 *
 * Slots are appended in id order (a pool loads in id order and new members
 * have larger ids); a removed member's slot is marked dead (`live` 0) and
 * stays until the table is rebuilt: ids stay ascending with the slot.
 */
import type { Anonymity } from '../probe/types';
import type { AddressFormat, ProxyType } from '../proxy/types';
import { HISTORY_BYTES } from './history';
import type { PoolProxyRow } from './shape';
import { TargetColumns } from './target-columns';
import type { ProxyStatus } from './types';

export const STATUS_CODE: Readonly<Record<ProxyStatus, number>> = Object.freeze({ unchecked: 0, working: 1, failed: 2 });
export const STATUS_OF: readonly ProxyStatus[] = Object.freeze(['unchecked', 'working', 'failed']);
const TYPES: readonly (ProxyType | null)[] = [null, 'http', 'socks4', 'socks5'];
const ANONYMITIES: readonly (Anonymity | null)[] = [null, 'elite', 'anonymous', 'transparent'];
const FORMATS: readonly AddressFormat[] = ['standard', 'url_auth', 'colon_auth'];

/** The asn column's null. */
export const NO_ASN = 0xffff_ffff;
/** Capacity grows by half (not doubling): at most a third of the slots idle after a growth. */
const GROWTH = 1.5;

const codeIn = <T>(list: readonly T[], v: T): number => Math.max(0, list.indexOf(v));

/** Strings as small integers (-1: null), never forgotten: for texts with few distinct values. */
export class Interner {
  readonly #codes = new Map<string, number>();
  readonly #texts: string[] = [];

  code(s: string | null): number {
    if (s === null) return -1;
    let c = this.#codes.get(s);
    if (c === undefined) {
      c = this.#texts.length;
      this.#texts.push(s);
      this.#codes.set(s, c);
    }
    return c;
  }

  /** The code of `s` when it has one (a filter's value), else -2 (matches nothing). */
  find(s: string): number {
    return this.#codes.get(s) ?? -2;
  }

  text(code: number): string | null {
    return code < 0 ? null : (this.#texts[code] ?? null);
  }
}

const nullable = (v: number): number | null => (Number.isNaN(v) ? null : v);
const orMinus = (v: number): number | null => (v === -1 ? null : v);
const dateOf = (ms: number): Date | null => (Number.isNaN(ms) ? null : new Date(ms));

export class ProxyTable {
  /** Slots in use (dead ones included). */
  size = 0;
  capacity: number;
  readonly texts = new Interner();
  id!: Float64Array;
  live!: Uint8Array;
  host: string[] = [];
  username: string[] = [];
  password: string[] = [];
  port!: Uint16Array;
  format!: Uint8Array;
  status!: Uint8Array;
  failures!: Int32Array;
  checks!: Int32Array;
  type!: Uint8Array;
  protocols!: Uint8Array;
  anonymity!: Uint8Array;
  /** 0 null, 1 false, 2 true. */
  https!: Uint8Array;
  origin: (string | null)[] = [];
  country!: Int32Array;
  countryName!: Int32Array;
  location!: Int32Array;
  isp!: Int32Array;
  /** NO_ASN for null (ASNs are 32-bit; 4294967295 is reserved, never one of a network). */
  asn!: Uint32Array;
  /** -1 for null (HTTP status codes are 3 digits). */
  statusCode!: Int16Array;
  responseTime!: Float32Array;
  errorCode!: Int32Array;
  errorMessage: (string | null)[] = [];
  latency!: Int32Array;
  uptime!: Int32Array;
  /** HISTORY_BYTES per slot; a slot whose first (version) byte is 0 has none. */
  history!: Uint8Array;
  firstSeen!: Float64Array;
  lastChecked!: Float64Array;
  lastChange!: Float64Array;
  nextCheck!: Float64Array;
  /** Its own protocol (TYPES code; 0: none, the pool's type). */
  protocol!: Uint8Array;
  /** One per target of the pool, in its customUrls order (setTargets). */
  targets: TargetColumns[] = [];

  constructor(capacity = 64) {
    this.capacity = Math.max(1, capacity);
    this.#allocate(this.capacity, false);
  }

  #allocate(cap: number, copy: boolean): void {
    const grow = <A extends Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Uint8Array>(old: A | undefined, make: (n: number) => A, fill?: number): A => {
      const a = make(cap);
      if (fill !== undefined) a.fill(fill);
      if (copy && old !== undefined) a.set(old.subarray(0, Math.min(old.length, a.length)) as never);
      return a;
    };
    this.id = grow(this.id, (n) => new Float64Array(n));
    this.live = grow(this.live, (n) => new Uint8Array(n));
    this.port = grow(this.port, (n) => new Uint16Array(n));
    this.format = grow(this.format, (n) => new Uint8Array(n));
    this.status = grow(this.status, (n) => new Uint8Array(n));
    this.failures = grow(this.failures, (n) => new Int32Array(n));
    this.checks = grow(this.checks, (n) => new Int32Array(n));
    this.type = grow(this.type, (n) => new Uint8Array(n));
    this.protocols = grow(this.protocols, (n) => new Uint8Array(n));
    this.anonymity = grow(this.anonymity, (n) => new Uint8Array(n));
    this.https = grow(this.https, (n) => new Uint8Array(n));
    this.country = grow(this.country, (n) => new Int32Array(n), -1);
    this.countryName = grow(this.countryName, (n) => new Int32Array(n), -1);
    this.location = grow(this.location, (n) => new Int32Array(n), -1);
    this.isp = grow(this.isp, (n) => new Int32Array(n), -1);
    this.asn = grow(this.asn, (n) => new Uint32Array(n), NO_ASN);
    this.statusCode = grow(this.statusCode, (n) => new Int16Array(n), -1);
    this.responseTime = grow(this.responseTime, (n) => new Float32Array(n), NaN);
    this.errorCode = grow(this.errorCode, (n) => new Int32Array(n), -1);
    this.latency = grow(this.latency, (n) => new Int32Array(n), -1);
    this.uptime = grow(this.uptime, (n) => new Int32Array(n), -1);
    this.history = grow(this.history, (n) => new Uint8Array(n * HISTORY_BYTES));
    this.firstSeen = grow(this.firstSeen, (n) => new Float64Array(n), NaN);
    this.lastChecked = grow(this.lastChecked, (n) => new Float64Array(n), NaN);
    this.lastChange = grow(this.lastChange, (n) => new Float64Array(n), NaN);
    this.nextCheck = grow(this.nextCheck, (n) => new Float64Array(n), NaN);
    this.protocol = grow(this.protocol, (n) => new Uint8Array(n));
    for (const c of this.targets) c.grow(cap);
  }

  /** The pool's targets are now `names`: a name kept keeps its states, a new one starts unchecked, a gone one is dropped. */
  setTargets(names: readonly string[]): void {
    const old = new Map(this.targets.map((c) => [c.name, c]));
    this.targets = names.map((n) => old.get(n) ?? new TargetColumns(n, this.capacity));
  }

  /** The column of target `name`, or undefined. */
  target(name: string): TargetColumns | undefined {
    return this.targets.find((c) => c.name === name);
  }

  /** Whether slot `slot` has a history (its version byte is set). */
  hasHistoryAt(slot: number): boolean {
    return this.history[slot * HISTORY_BYTES] !== 0;
  }

  asnOf(slot: number): number | null {
    const a = this.asn[slot]!;
    return a === NO_ASN ? null : a;
  }

  /** The exit address, the host's own string when they are the same (no second copy). */
  originFor(slot: number, origin: string | null): string | null {
    const host = this.host[slot];
    return origin !== null && origin === host ? host : origin;
  }

  /** Slot `slot`'s history bytes (a view: folding into it changes the table). */
  historyOf(slot: number): Uint8Array {
    return this.history.subarray(slot * HISTORY_BYTES, (slot + 1) * HISTORY_BYTES);
  }

  /** Appends a row (ids must come in ascending order); its slot. */
  add(row: PoolProxyRow): number {
    if (this.size === this.capacity) {
      this.capacity = Math.ceil(this.capacity * GROWTH);
      this.#allocate(this.capacity, true);
    }
    const slot = this.size++;
    this.id[slot] = row.id;
    this.live[slot] = 1;
    this.host[slot] = row.host;
    this.username[slot] = row.username;
    this.password[slot] = row.password;
    this.port[slot] = row.port;
    this.format[slot] = codeIn(FORMATS, row.format);
    this.protocol[slot] = codeIn(TYPES, row.protocol ?? null);
    this.firstSeen[slot] = row.firstSeenAt.getTime();
    this.set(slot, row);
    return slot;
  }

  /** Every field but the address and first_seen_at from `row`. */
  set(slot: number, row: PoolProxyRow): void {
    this.status[slot] = STATUS_CODE[row.status] ?? 0;
    this.failures[slot] = row.failures;
    this.checks[slot] = row.checks;
    this.type[slot] = codeIn(TYPES, row.type);
    this.protocols[slot] = row.protocols;
    this.anonymity[slot] = codeIn(ANONYMITIES, row.anonymity);
    this.https[slot] = row.https === null ? 0 : row.https ? 2 : 1;
    this.origin[slot] = this.originFor(slot, row.origin);
    this.country[slot] = this.texts.code(row.country);
    this.countryName[slot] = this.texts.code(row.countryName);
    this.location[slot] = this.texts.code(row.location);
    this.isp[slot] = this.texts.code(row.isp);
    this.asn[slot] = row.asn === null || row.asn < 0 || row.asn >= NO_ASN ? NO_ASN : row.asn;
    this.statusCode[slot] = row.statusCode ?? -1;
    this.responseTime[slot] = row.responseTimeMs ?? NaN;
    this.errorCode[slot] = this.texts.code(row.errorCode);
    this.errorMessage[slot] = row.errorMessage;
    this.latency[slot] = row.latencyP50Ms ?? -1;
    this.uptime[slot] = row.uptimeH24Ppm ?? -1;
    const h = this.historyOf(slot);
    if (row.history !== null && row.history.length === HISTORY_BYTES) h.set(row.history);
    else h.fill(0);
    this.lastChecked[slot] = row.lastCheckedAt?.getTime() ?? NaN;
    this.lastChange[slot] = row.lastChangeAt?.getTime() ?? NaN;
    this.nextCheck[slot] = row.nextCheckAt.getTime();
    for (const c of this.targets) c.set(slot, row.targets?.[c.name] ?? null);
  }

  statusOf(slot: number): ProxyStatus {
    return STATUS_OF[this.status[slot]!] ?? 'unchecked';
  }

  /** Its own protocol, or null (the pool's type). */
  protocolOf(slot: number): ProxyType | null {
    return TYPES[this.protocol[slot]!] ?? null;
  }

  typeOf(slot: number): ProxyType | null {
    return TYPES[this.type[slot]!] ?? null;
  }

  anonymityOf(slot: number): Anonymity | null {
    return ANONYMITIES[this.anonymity[slot]!] ?? null;
  }

  formatOf(slot: number): AddressFormat {
    return FORMATS[this.format[slot]!] ?? 'standard';
  }

  httpsOf(slot: number): boolean | null {
    const h = this.https[slot];
    return h === 0 ? null : h === 2;
  }

  /** The row of `slot` (an object: for a page, a flush or a test, never on the hot path). */
  rowOf(slot: number): PoolProxyRow {
    const t = this.texts;
    return {
      id: this.id[slot]!,
      host: this.host[slot]!,
      port: this.port[slot]!,
      username: this.username[slot]!,
      password: this.password[slot]!,
      format: this.formatOf(slot),
      status: this.statusOf(slot),
      failures: this.failures[slot]!,
      checks: this.checks[slot]!,
      type: this.typeOf(slot),
      protocols: this.protocols[slot]!,
      anonymity: this.anonymityOf(slot),
      https: this.httpsOf(slot),
      origin: this.origin[slot] ?? null,
      country: t.text(this.country[slot]!),
      countryName: t.text(this.countryName[slot]!),
      location: t.text(this.location[slot]!),
      isp: t.text(this.isp[slot]!),
      asn: this.asnOf(slot),
      statusCode: orMinus(this.statusCode[slot]!),
      responseTimeMs: nullable(this.responseTime[slot]!),
      errorCode: t.text(this.errorCode[slot]!),
      errorMessage: this.errorMessage[slot] ?? null,
      latencyP50Ms: orMinus(this.latency[slot]!),
      uptimeH24Ppm: orMinus(this.uptime[slot]!),
      history: this.hasHistoryAt(slot) ? this.historyOf(slot).slice() : null,
      firstSeenAt: new Date(this.firstSeen[slot]!),
      lastCheckedAt: dateOf(this.lastChecked[slot]!),
      lastChangeAt: dateOf(this.lastChange[slot]!),
      nextCheckAt: new Date(this.nextCheck[slot]!),
      ...(this.protocol[slot] === 0 ? {} : { protocol: this.protocolOf(slot) }),
      ...(this.targets.length === 0 ? {} : { targets: Object.fromEntries(this.targets.map((c) => [c.name, c.get(slot)])) }),
    };
  }
}
