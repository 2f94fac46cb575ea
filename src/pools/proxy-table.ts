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
 * (slot i at i * HISTORY_BYTES), the host and origin as AddressColumns (an
 * IPv4 literal in 4 bytes, any other address its own string in a sparse
 * Map), credentials and error messages as TextColumns (2-byte codes of
 * their distinct texts, capped; past the cap a slot's own string), and the
 * low-cardinality texts (country, country name, location, isp, error code)
 * as Int16 codes of one Interner (Int32 once it passes 32 768 texts). Per
 * capacity slot: 249 bytes of typed arrays and no string reference
 * (test/unit/pools-table-fold.test.ts counts them), no string per proxy
 * of a list of IPv4 addresses (bench/micro-pool-memory.ts measures a
 * million: bench/RESULTS.md "A million proxies in memory"). Capacity grows by half while a pool loads; the owner fits it to
 * the size once loaded (`fit`), so idle slots come only from later growth.
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
import { AddressColumn, TextColumn } from './text-columns';
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

/** Interner codes an Int16Array column holds (0..32767; -1 null). */
const INT16_CODES = 0x8000;
/** Ids a Uint32Array holds; a larger one widens the column to Float64Array. */
const UINT32_IDS = 0x1_0000_0000;

const codeIn = <T>(list: readonly T[], v: T): number => Math.max(0, list.indexOf(v));

/** Strings as small integers (-1: null), never forgotten: for texts with few distinct values. */
export class Interner {
  readonly #codes = new Map<string, number>();
  readonly #texts: string[] = [];
  readonly #onWide: (() => void) | undefined;

  /**
   * `onWide`: called once, before the first code that an Int16Array cannot hold is handed out (the
   * table then replaces its code columns: take the code before reading the column to write it).
   */
  constructor(onWide?: () => void) {
    this.#onWide = onWide;
  }

  code(s: string | null): number {
    if (s === null) return -1;
    let c = this.#codes.get(s);
    if (c === undefined) {
      c = this.#texts.length;
      if (c === INT16_CODES) this.#onWide?.();
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
  /** Country, country name, location, isp and error code: Int16 codes until the 32 768th text, then Int32. */
  readonly texts = new Interner(() => this.#widenCodes());
  /** Uint32 while every id fits (a bigserial's first 4 294 967 295), then Float64. */
  id!: Uint32Array | Float64Array;
  live!: Uint8Array;
  hosts: AddressColumn;
  usernames: TextColumn;
  passwords: TextColumn;
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
  /** The exit address (IPv4 in 4 bytes: one equal to the host costs no string). */
  origins: AddressColumn;
  country!: Int16Array | Int32Array;
  countryName!: Int16Array | Int32Array;
  location!: Int16Array | Int32Array;
  isp!: Int16Array | Int32Array;
  /** NO_ASN for null (ASNs are 32-bit; 4294967295 is reserved, never one of a network). */
  asn!: Uint32Array;
  /** -1 for null (HTTP status codes are 3 digits). */
  statusCode!: Int16Array;
  responseTime!: Float32Array;
  errorCode!: Int16Array | Int32Array;
  /** Error messages: few distinct ones (the probes' templates), coded. */
  errorMessages: TextColumn;
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
    this.hosts = new AddressColumn(this.capacity);
    this.usernames = new TextColumn(this.capacity);
    this.passwords = new TextColumn(this.capacity);
    this.origins = new AddressColumn(this.capacity);
    this.errorMessages = new TextColumn(this.capacity);
    this.#allocate(this.capacity, false);
  }

  /** Capacity = size (at least 1): no idle slot after a load whose size was not known in advance. */
  fit(): void {
    const cap = Math.max(1, this.size);
    if (cap === this.capacity) return;
    this.capacity = cap;
    this.#allocate(cap, true);
  }

  /** The Interner's codes outgrew Int16: its five columns become Int32 (same values). */
  #widenCodes(): void {
    const wide = (a: Int16Array | Int32Array): Int32Array => (a instanceof Int32Array ? a : Int32Array.from(a));
    this.country = wide(this.country);
    this.countryName = wide(this.countryName);
    this.location = wide(this.location);
    this.isp = wide(this.isp);
    this.errorCode = wide(this.errorCode);
  }

  #allocate(cap: number, copy: boolean): void {
    const grow = <A extends Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Uint8Array>(old: A | undefined, make: (n: number) => A, fill?: number): A => {
      const a = make(cap);
      if (fill !== undefined) a.fill(fill);
      if (copy && old !== undefined) a.set(old.subarray(0, Math.min(old.length, a.length)) as never);
      return a;
    };
    // a column keeps its width (Int16 or Int32, Uint32 or Float64) when it grows
    const same = <A extends Int16Array | Int32Array | Uint32Array | Float64Array>(old: A | undefined, narrow: (n: number) => A): ((n: number) => A) =>
      old === undefined ? narrow : (n) => new (old.constructor as new (n: number) => A)(n);
    const codes = (old: Int16Array | Int32Array | undefined) => grow(old, same<Int16Array | Int32Array>(old, (n) => new Int16Array(n)), -1);
    if (copy) for (const c of [this.hosts, this.usernames, this.passwords, this.origins, this.errorMessages]) c.resize(cap);
    this.id = grow(this.id, same<Uint32Array | Float64Array>(this.id, (n) => new Uint32Array(n)));
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
    this.country = codes(this.country);
    this.countryName = codes(this.countryName);
    this.location = codes(this.location);
    this.isp = codes(this.isp);
    this.asn = grow(this.asn, (n) => new Uint32Array(n), NO_ASN);
    this.statusCode = grow(this.statusCode, (n) => new Int16Array(n), -1);
    this.responseTime = grow(this.responseTime, (n) => new Float32Array(n), NaN);
    this.errorCode = codes(this.errorCode);
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

  hostOf(slot: number): string {
    return this.hosts.get(slot) ?? '';
  }

  /** '' when the proxy has no credentials. */
  usernameOf(slot: number): string {
    return this.usernames.get(slot) ?? '';
  }

  passwordOf(slot: number): string {
    return this.passwords.get(slot) ?? '';
  }

  /** The slot's address as addressOf / probeTarget take it. */
  addressAt(slot: number): { host: string; port: number; username: string; password: string } {
    return { host: this.hostOf(slot), port: this.port[slot]!, username: this.usernameOf(slot), password: this.passwordOf(slot) };
  }

  originOf(slot: number): string | null {
    return this.origins.get(slot);
  }

  setOrigin(slot: number, origin: string | null): void {
    this.origins.set(slot, origin);
  }

  errorMessageOf(slot: number): string | null {
    return this.errorMessages.get(slot);
  }

  setErrorMessage(slot: number, message: string | null): void {
    this.errorMessages.set(slot, message);
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

  /** The exit address as the table gives it back (origins code an IPv4 one in 4 bytes, the host's or not). */
  originFor(_slot: number, origin: string | null): string | null {
    return origin;
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
    if (row.id >= UINT32_IDS && this.id instanceof Uint32Array) this.id = Float64Array.from(this.id);
    const slot = this.size++;
    this.id[slot] = row.id;
    this.live[slot] = 1;
    this.hosts.set(slot, row.host);
    this.usernames.set(slot, row.username);
    this.passwords.set(slot, row.password);
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
    this.origins.set(slot, row.origin);
    // the codes first: a new one may widen the columns (a new array), which `this.x[slot] = code(...)` would miss
    const t = this.texts;
    const country = t.code(row.country);
    const countryName = t.code(row.countryName);
    const location = t.code(row.location);
    const isp = t.code(row.isp);
    const errorCode = t.code(row.errorCode);
    this.country[slot] = country;
    this.countryName[slot] = countryName;
    this.location[slot] = location;
    this.isp[slot] = isp;
    this.asn[slot] = row.asn === null || row.asn < 0 || row.asn >= NO_ASN ? NO_ASN : row.asn;
    this.statusCode[slot] = row.statusCode ?? -1;
    this.responseTime[slot] = row.responseTimeMs ?? NaN;
    this.errorCode[slot] = errorCode;
    this.errorMessages.set(slot, row.errorMessage);
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
      host: this.hostOf(slot),
      port: this.port[slot]!,
      username: this.usernameOf(slot),
      password: this.passwordOf(slot),
      format: this.formatOf(slot),
      status: this.statusOf(slot),
      failures: this.failures[slot]!,
      checks: this.checks[slot]!,
      type: this.typeOf(slot),
      protocols: this.protocols[slot]!,
      anonymity: this.anonymityOf(slot),
      https: this.httpsOf(slot),
      origin: this.originOf(slot),
      country: t.text(this.country[slot]!),
      countryName: t.text(this.countryName[slot]!),
      location: t.text(this.location[slot]!),
      isp: t.text(this.isp[slot]!),
      asn: this.asnOf(slot),
      statusCode: orMinus(this.statusCode[slot]!),
      responseTimeMs: nullable(this.responseTime[slot]!),
      errorCode: t.text(this.errorCode[slot]!),
      errorMessage: this.errorMessageOf(slot),
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
