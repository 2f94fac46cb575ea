/**
 * A small DNS cache for proxy and target hostnames: TTL-bounded (positive
 * answers 60 s, failures 5 s), size-bounded (oldest entry evicted first) and
 * de-duplicating (concurrent lookups of one name share one query). Answers
 * list IPv4 addresses first. IP literals never reach it (callers check
 * `net.isIP` first). Lookups go through the system resolver (dns.lookup) so
 * /etc/hosts and the host's resolver configuration apply.
 */
import { lookup } from 'node:dns/promises';
import { systemClock, type Clock } from '../../clock';

export interface DnsAnswer {
  /** resolved addresses, IPv4 first; empty on failure */
  addresses: string[];
  /** resolver error code on failure (ENOTFOUND, EAI_AGAIN, ...) */
  errorCode: string | null;
}

interface Entry {
  expires: number;
  answer: Promise<DnsAnswer>;
}

export interface DnsCacheOptions {
  ttlMs?: number;
  negativeTtlMs?: number;
  maxEntries?: number;
  /** injectable resolver (tests) */
  resolve?: (host: string) => Promise<string[]>;
  /** the clock of the TTLs (default systemClock; tests pass a fake one) */
  clock?: Pick<Clock, 'now'>;
}

async function systemResolve(host: string): Promise<string[]> {
  const all = await lookup(host, { all: true });
  return all.map((a) => a.address);
}

export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly resolver: (host: string) => Promise<string[]>;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(opts: DnsCacheOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.negativeTtlMs = opts.negativeTtlMs ?? 5_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.resolver = opts.resolve ?? systemResolve;
    this.clock = opts.clock ?? systemClock;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Never rejects. */
  resolve(host: string): Promise<DnsAnswer> {
    const key = host.toLowerCase();
    const now = this.clock.now();
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expires > now) return hit.answer;
    if (hit !== undefined) this.entries.delete(key);
    const entry: Entry = { expires: now + this.ttlMs, answer: this.query(key) };
    entry.answer.then((a) => {
      if (a.addresses.length === 0) entry.expires = this.clock.now() + this.negativeTtlMs;
    });
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, entry);
    return entry.answer;
  }

  /** Puts a fixed answer in the cache for ttlMs (tests, static overrides). */
  prime(host: string, answer: DnsAnswer, ttlMs = this.ttlMs): void {
    const key = host.toLowerCase();
    this.entries.delete(key);
    this.entries.set(key, { expires: this.clock.now() + ttlMs, answer: Promise.resolve(answer) });
  }

  clear(): void {
    this.entries.clear();
  }

  private async query(host: string): Promise<DnsAnswer> {
    try {
      const list = await this.resolver(host);
      const v4 = list.filter((a) => a.indexOf(':') === -1);
      const v6 = list.filter((a) => a.indexOf(':') !== -1);
      const addresses = v4.concat(v6);
      return { addresses, errorCode: addresses.length === 0 ? 'ENODATA' : null };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      return { addresses: [], errorCode: typeof code === 'string' ? code : 'EDNS' };
    }
  }
}

/** The process-wide cache the probes use. */
export const dnsCache = new DnsCache();
