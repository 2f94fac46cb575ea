/**
 * Admission of one client connection, between its front (front-session.ts)
 * and its first upstream try: the credential check, then `admit()`.
 *
 * - checkCredentials: the username's grammar (username.ts), the key (the
 *   pool port's `authenticate`, the API's own key check), the pool's working
 *   set; `accepted` with what the rest of the connection needs, `denied`
 *   (one answer for a bad username, a wrong key and another account's pool:
 *   the client's 407), or `unavailable` (the look-up failed: the client's 503).
 * - admit: the per-key cap (KeySlots: a slot is taken here and held until the
 *   connection ends), then the SSRF guard on the target: an IP literal as it
 *   is, a name after DNS (every address it resolves to; none: dns_failed).
 *   `Admitted` holds the slot (the caller releases it once); a `Refusal`
 *   holds none. A name's first IPv4 address is kept for a SOCKS4 upstream
 *   (plain SOCKS4 has no names; many servers lack SOCKS4a).
 *
 * No socket and no clock; the ports (pools, DNS) are passed in, so each step
 * is unit-tested with fakes.
 */
import { hashApiKey } from '../accounts/keys';
import { parseIPv4, parseIPv6 } from '../probe/codec/ip-literal';
import { isBlockedAddress } from '../probe/codec/ssrf';
import type { DnsAnswer } from '../probe/net/dns-cache';
import type { GatewayAccount, GatewayPools } from './ports';
import type { WorkingSet } from './upstream-choice';
import { parseGatewayUsername, type GatewayUser } from './username';

/** A client whose credentials were accepted. */
export interface Authed {
  readonly account: GatewayAccount;
  /** sha256 of the key: the per-key cap's key. */
  readonly keyHash: string;
  readonly user: GatewayUser;
  readonly working: WorkingSet;
}

export type Checked = { kind: 'accepted'; auth: Authed } | { kind: 'denied' } | { kind: 'unavailable'; err: unknown };

export async function checkCredentials(pools: Pick<GatewayPools, 'authenticate' | 'workingSet'>, username: string, key: string): Promise<Checked> {
  const parsed = parseGatewayUsername(username);
  if (!parsed.ok) return { kind: 'denied' };
  try {
    const account = await pools.authenticate(key);
    if (account === null) return { kind: 'denied' };
    const working = await pools.workingSet(account.id, parsed.user.poolId);
    if (working === null) return { kind: 'denied' };
    return { kind: 'accepted', auth: { account, keyHash: hashApiKey(key), user: parsed.user, working } };
  } catch (err) {
    return { kind: 'unavailable', err };
  }
}

/** Open connections per key, at most `max` each. */
export class KeySlots {
  readonly #open = new Map<string, number>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Keys holding a slot. */
  get keys(): number {
    return this.#open.size;
  }

  /** Takes a slot for `key`; false when it has `max` already. */
  take(key: string): boolean {
    const n = this.#open.get(key) ?? 0;
    if (n >= this.#max) return false;
    this.#open.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = (this.#open.get(key) ?? 1) - 1;
    if (n <= 0) this.#open.delete(key);
    else this.#open.set(key, n);
  }
}

export interface AdmitPorts {
  readonly slots: KeySlots;
  /** ALLOW_PRIVATE_TARGETS: the target may be private. */
  readonly allowPrivateTargets: boolean;
  resolve(host: string): Promise<DnsAnswer>;
}

export type Admitted = { kind: 'admitted'; slotKey: string; targetV4: string | null };
export type Refusal = { kind: 'refused'; code: 'too_many_connections' | 'blocked_target' | 'dns_failed' };

/** The per-key cap, then the SSRF guard on `host` (after DNS for a name). Never rejects. */
export async function admit(ports: AdmitPorts, keyHash: string, host: string): Promise<Admitted | Refusal> {
  if (!ports.slots.take(keyHash)) return { kind: 'refused', code: 'too_many_connections' };
  const refuse = (code: Refusal['code']): Refusal => {
    ports.slots.release(keyHash);
    return { kind: 'refused', code };
  };
  if (parseIPv4(host) >= 0 || parseIPv6(host) !== null) {
    if (!ports.allowPrivateTargets && isBlockedAddress(host)) return refuse('blocked_target');
    return { kind: 'admitted', slotKey: keyHash, targetV4: null };
  }
  let a: DnsAnswer;
  try {
    a = await ports.resolve(host);
  } catch {
    return refuse('dns_failed');
  }
  if (a.addresses.length === 0) return refuse('dns_failed');
  if (!ports.allowPrivateTargets && a.addresses.some(isBlockedAddress)) return refuse('blocked_target');
  return { kind: 'admitted', slotKey: keyHash, targetV4: a.addresses.find((x) => parseIPv4(x) >= 0) ?? null };
}
