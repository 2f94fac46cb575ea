/** The messages' data (src/webhooks/payloads.ts) and the sealed secret (seal.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { changeOf, messageBody, poolStateData, proxiesChangedMessages, type ProxyDown, type ProxyUp } from '../../src/webhooks/payloads';
import { OpenApiResponseChecker } from '../helpers/openapi-check';
import { servedOpenApiDocument } from '../helpers/served-doc';
import { isWebhookId, newMessageId, newWebhookId, newWebhookSecret, openSecret, sealingKey, sealSecret } from '../../src/webhooks/seal';

const counts = { total: 10, working: 4, failed: 6, unchecked: 0 };
const up = (i: number): ProxyUp => ({ proxy: { host: `1.1.${i >> 8}.${i & 255}`, port: 80, hasAuth: false }, at: '2026-01-01T00:00:00.000Z' });
const down = (i: number): ProxyDown => ({ ...up(i), error: { code: 'timeout', message: 'timed out' } });

describe('pool.proxies_changed batching', () => {
  test('5 000 downs: 5 messages of 1 000, numbered', () => {
    const m = proxiesChangedMessages('poolaaaaaaaaaa', [], Array.from({ length: 5000 }, (_, i) => down(i)), counts);
    expect(m.map((x) => x.down.length)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(m.map((x) => x.part)).toEqual([1, 2, 3, 4, 5].map((index) => ({ index, of: 5 })));
    expect(m[0]).toMatchObject({ pool: 'poolaaaaaaaaaa', up: [], counts });
  });

  test('none: no message; every up and down exactly once, ups first, at most max a message', () => {
    expect(proxiesChangedMessages('p', [], [], counts)).toEqual([]);
    fc.assert(
      fc.property(fc.nat(40), fc.nat(40), fc.integer({ min: 1, max: 9 }), (u, d, max) => {
        const ups = Array.from({ length: u }, (_, i) => up(i));
        const downs = Array.from({ length: d }, (_, i) => down(1000 + i));
        const m = proxiesChangedMessages('p', ups, downs, counts, max);
        expect(m).toHaveLength(Math.ceil((u + d) / max));
        for (const x of m) expect(x.up.length + x.down.length).toBeLessThanOrEqual(max);
        expect(m.flatMap((x) => x.up)).toEqual(ups);
        expect(m.flatMap((x) => x.down)).toEqual(downs);
      }),
    );
  });

  test("a batch's messages are what the served document's OpenAPI webhooks say (closed schema)", async () => {
    const checker = await OpenApiResponseChecker.create(await servedOpenApiDocument());
    const withAuth: ProxyUp = { proxy: { host: '1.2.3.4', port: 80, hasAuth: true, username: 'u', password: 'p' }, at: '2026-01-01T00:00:00.000Z' };
    const [m] = proxiesChangedMessages('poolaaaaaaaaaa', [up(1), withAuth], [down(2), { ...down(3), error: null }], counts);
    const body = JSON.parse(messageBody('pool.proxies_changed', '2026-01-01T00:00:00.000Z', m));
    expect(checker.webhookProblems(body)).toEqual([]);
    expect(checker.webhookProblems({ ...body, data: { ...body.data, part: undefined } })).not.toEqual([]);
  });

  test('the events feed: proxy.up / proxy.down become entries, others not; pool.paused data is the event without its name', () => {
    const base = { pool: 'p', at: '2026-01-01T00:00:00.000Z', counts };
    expect(changeOf({ ...base, event: 'proxy.up', proxy: up(1).proxy })).toEqual({ kind: 'up', up: up(1) });
    expect(changeOf({ ...base, event: 'proxy.down', proxy: up(1).proxy, error: { code: 'timeout', message: 'timed out' } })).toEqual({ kind: 'down', down: down(1) });
    expect(changeOf({ ...base, event: 'round.completed' })).toBeNull();
    expect(poolStateData({ ...base, event: 'pool.paused', reason: 'owner' })).toEqual({ ...base, reason: 'owner' });
  });

  test('the body signed: {type, timestamp, data}, verifiable with the library', () => {
    const body = messageBody('webhook.test', '2026-01-01T00:00:00.000Z', { webhook: 'wh_x' });
    expect(JSON.parse(body)).toEqual({ type: 'webhook.test', timestamp: '2026-01-01T00:00:00.000Z', data: { webhook: 'wh_x' } });
    const secret = newWebhookSecret();
    const now = new Date();
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('msg_1', now, body) };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });
});

describe('sealed secrets', () => {
  const key = sealingKey('result-secret-one-0123456789');
  test('open with the same key and id; not with another key, another id, or altered', () => {
    const secret = newWebhookSecret();
    const id = newWebhookId();
    const sealed = sealSecret(key, id, secret);
    expect(sealed).toStartWith('v1.');
    expect(sealed).not.toContain(secret.slice(6));
    expect(openSecret(key, id, sealed)).toBe(secret);
    expect(openSecret(sealingKey('result-secret-two-0123456789'), id, sealed)).toBeNull();
    expect(openSecret(key, newWebhookId(), sealed)).toBeNull();
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1);
    expect(openSecret(key, id, flipped)).toBeNull();
    for (const junk of ['', 'v1', 'v1..', 'v2.a.b', `${sealed}.x`]) expect(openSecret(key, id, junk)).toBeNull();
    expect(sealSecret(key, id, secret)).not.toBe(sealed); // a fresh iv each time
  });

  test('ids and secrets', () => {
    expect(newWebhookSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(newWebhookSecret().slice(6), 'base64')).toHaveLength(32);
    const id = newWebhookId();
    expect(isWebhookId(id)).toBe(true);
    expect(isWebhookId('wh_short')).toBe(false);
    expect(newMessageId()).toMatch(/^msg_[a-z0-9]{24}$/);
    expect(() => sealingKey('')).toThrow(RangeError);
  });
});
