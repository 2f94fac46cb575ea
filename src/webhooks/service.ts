/**
 * Webhook endpoints as the HTTP layer sees them (the WebhooksPort of
 * src/http/context.ts): every call takes the owner's account id; another
 * account's endpoint is absent (null / false). The secret is generated
 * here, sealed before it is stored (seal.ts) and returned only by create
 * and rotateSecret. `refusedTarget` is the SSRF guard of a URL at the time
 * it is given (its name resolved now; each attempt resolves it again).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Db } from '../../db/client';
import { blockedTargetMessage, isBlockedAddress } from '../probe/codec/ssrf';
import { newWebhookId, newWebhookSecret, sealSecret } from './seal';
import * as store from './store';
import { MAX_WEBHOOKS_PER_ACCOUNT, type DeliveryObject, type WebhookCreate, type WebhookObject, type WebhookPatch } from './types';

export interface WebhookServiceDeps {
  db: Db;
  key: Buffer;
  allowPrivateTargets: boolean;
  maxPerAccount?: number;
  /** A webhook.test (or any message) was written: the delivery loop looks now. */
  onWritten?: () => void;
  resolve?: (host: string) => Promise<string[]>;
  now?: () => Date;
}

export class WebhookService {
  readonly #d: WebhookServiceDeps;

  constructor(deps: WebhookServiceDeps) {
    this.#d = deps;
  }

  get allowPrivateTargets(): boolean {
    return this.#d.allowPrivateTargets;
  }

  get maxPerAccount(): number {
    return this.#d.maxPerAccount ?? MAX_WEBHOOKS_PER_ACCOUNT;
  }

  #now(): Date {
    return (this.#d.now ?? (() => new Date()))();
  }

  async create(accountId: string, req: WebhookCreate): Promise<{ webhook: WebhookObject; secret: string } | 'limit'> {
    const id = newWebhookId();
    const secret = newWebhookSecret();
    const row = await store.insertWebhook(this.#d.db, { id, accountId, ...req, secretSealed: sealSecret(this.#d.key, id, secret), now: this.#now() }, this.maxPerAccount);
    if (row === 'limit') return 'limit';
    return { webhook: store.webhookObject(row), secret };
  }

  async list(accountId: string): Promise<WebhookObject[]> {
    return (await store.listWebhooks(this.#d.db, accountId)).map(store.webhookObject);
  }

  async get(accountId: string, id: string): Promise<WebhookObject | null> {
    const row = await store.getWebhook(this.#d.db, accountId, id);
    return row === null ? null : store.webhookObject(row);
  }

  async update(accountId: string, id: string, patch: WebhookPatch): Promise<WebhookObject | null> {
    const row = await store.updateWebhook(this.#d.db, accountId, id, patch, this.#now());
    if (row !== null && patch.state === 'enabled') this.#d.onWritten?.();
    return row === null ? null : store.webhookObject(row);
  }

  delete(accountId: string, id: string): Promise<boolean> {
    return store.deleteWebhook(this.#d.db, accountId, id);
  }

  /** Writes a webhook.test message for the endpoint; false when it is not the account's. */
  async test(accountId: string, id: string): Promise<boolean> {
    const ok = await store.enqueueTest(this.#d.db, accountId, id, this.#now().getTime());
    if (ok) this.#d.onWritten?.();
    return ok;
  }

  /** A new secret (the old one stops signing at once); null when the endpoint is not the account's. */
  async rotateSecret(accountId: string, id: string): Promise<string | null> {
    const secret = newWebhookSecret();
    return (await store.setSecret(this.#d.db, accountId, id, sealSecret(this.#d.key, id, secret), this.#now())) ? secret : null;
  }

  deliveries(accountId: string, id: string): Promise<DeliveryObject[] | null> {
    return store.listDeliveries(this.#d.db, accountId, id);
  }

  foreignPools(accountId: string, ids: readonly string[]): Promise<string[]> {
    return store.foreignPools(this.#d.db, accountId, ids);
  }

  /** Why `url` may not be sent to now (a private, loopback or reserved address, a name that does not resolve); null when it may. */
  async refusedTarget(url: string): Promise<string | null> {
    if (this.#d.allowPrivateTargets) return null;
    const u = new URL(url);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    if (isIP(host) !== 0) return isBlockedAddress(host) ? blockedTargetMessage(host) : null;
    let addresses: string[];
    try {
      addresses = await (this.#d.resolve ?? (async (h: string) => (await dnsLookup(h, { all: true })).map((a) => a.address)))(host);
    } catch {
      return `${host} did not resolve`;
    }
    if (addresses.length === 0) return `${host} did not resolve`;
    const bad = addresses.find(isBlockedAddress);
    return bad === undefined ? null : blockedTargetMessage(bad, host);
  }
}
