/**
 * The endpoints' signing secrets at rest (issue 32: "a database dump alone
 * does not hand it out"). A secret is sealed with AES-256-GCM under a key
 * derived from the service's RESULT_SECRET (HKDF-SHA256, its own label, so
 * the key signs no result link and a result link's key opens no secret),
 * bound to its endpoint's id (the additional data: a sealed value copied to
 * another row does not open). Every API node of a cluster shares
 * RESULT_SECRET (compose/service-secrets.ts), so any node can sign.
 *
 *   sealed = "v1." + base64url(iv, 12 bytes) + "." + base64url(ciphertext + tag)
 *
 * Changing RESULT_SECRET makes the stored secrets unreadable: their
 * deliveries fail (`error: "secret unreadable"`) until the owner rotates
 * the secret (POST /webhooks/{id}/rotate-secret). No I/O.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const INFO = 'proxycheck webhook secret v1';

/** The sealing key of `serviceSecret` (32 bytes). */
export function sealingKey(serviceSecret: string): Buffer {
  if (serviceSecret.length === 0) throw new RangeError('sealingKey: empty service secret');
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'proxycheck-webhooks', INFO, 32));
}

export function sealSecret(key: Buffer, webhookId: string, secret: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(webhookId));
  const body = Buffer.concat([c.update(secret, 'utf8'), c.final(), c.getAuthTag()]);
  return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

/** The secret, or null when `sealed` does not open with this key and id (another RESULT_SECRET, another row, altered). */
export function openSecret(key: Buffer, webhookId: string, sealed: string): string | null {
  const [v, ivText, bodyText, extra] = sealed.split('.');
  if (v !== VERSION || ivText === undefined || bodyText === undefined || extra !== undefined) return null;
  const iv = Buffer.from(ivText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (iv.length !== 12 || body.length < 17) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', key, iv);
    d.setAAD(Buffer.from(webhookId));
    d.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** A new signing secret as Standard Webhooks writes it: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new endpoint id (`wh_` + 20 characters of [a-z0-9]). */
export function newWebhookId(): string {
  return `wh_${randomId(20)}`;
}

/** A new message id (`msg_` + 24 characters of [a-z0-9]): the webhook-id header. */
export function newMessageId(): string {
  return `msg_${randomId(24)}`;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomId(n: number): string {
  let id = '';
  while (id.length < n) {
    for (const b of randomBytes(n * 2)) if (b < 252 && id.length < n) id += ALPHABET[b % 36];
  }
  return id;
}

export const WEBHOOK_ID = /^wh_[a-z0-9]{20}$/;

export function isWebhookId(s: string): boolean {
  return WEBHOOK_ID.test(s);
}
