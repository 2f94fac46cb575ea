/** The dashboard's Webhooks view, pure parts (src/web/client/webhook-format.ts): rows escaped, attempts, the form's body. */
import { describe, expect, test } from 'bun:test';
import { attemptText, deliveryRowHtml, webhookCreateBody, webhookRowHtml } from '../../src/web/client/webhook-format';

describe('webhook rows', () => {
  test('every value escaped; state, events, actions by id', () => {
    const html = webhookRowHtml({ id: 'wh_abcdefghij0123456789', url: 'https://a.example/<x>?a=1&b="2"', events: ['pool.paused'], state: 'disabled', disabled_reason: 'no successful delivery for 3 days of attempts', last_success_at: null });
    expect(html).toContain('https://a.example/&lt;x&gt;?a=1&amp;b=&quot;2&quot;');
    expect(html).not.toContain('<x>');
    expect(html).toContain('disabled: no successful delivery for 3 days of attempts');
    expect(html).toContain('data-act="test" data-id="wh_abcdefghij0123456789"');
    expect(html).toContain('<span class="badge bad">');
  });

  test('deliveries: attempts in order, no answer named with its error', () => {
    expect(attemptText({ at: 'x', status: null, error: 'connect_failed: ECONNREFUSED', duration_ms: 2 })).toBe('no answer (connect_failed: ECONNREFUSED), 2 ms');
    expect(attemptText({ at: 'x', status: 500, error: 'HTTP 500', duration_ms: 30 })).toBe('HTTP 500, 30 ms');
    const html = deliveryRowHtml({
      id: 'msg_1',
      event: 'webhook.test',
      created_at: '2026-01-01T10:00:00.000Z',
      attempts: [
        { at: '2026-01-01T10:00:00.100Z', status: 500, error: 'HTTP 500', duration_ms: 30 },
        { at: '2026-01-01T10:00:05.100Z', status: 204, error: null, duration_ms: 12 },
      ],
      state: 'delivered',
      next_attempt_at: null,
    });
    expect(html).toContain('2026-01-01 10:00:00 UTC');
    expect(html.indexOf('HTTP 500')).toBeLessThan(html.indexOf('HTTP 204'));
    expect(html).toContain('<span class="badge ok">delivered</span>');
    expect(deliveryRowHtml({ id: 'm', event: 'pool.paused', created_at: '2026-01-01T10:00:00.000Z', attempts: [], state: 'pending', next_attempt_at: '2026-01-01T10:00:00.000Z' })).toContain('none yet');
  });

  test('the form: an http(s) URL and at least one event', () => {
    expect(webhookCreateBody(' https://a.example/h ', ['pool.paused'])).toEqual({ body: { url: 'https://a.example/h', events: ['pool.paused'] } });
    expect(webhookCreateBody('ftp://a.example/', ['pool.paused'])).toEqual({ error: 'Enter an http:// or https:// URL.' });
    expect(webhookCreateBody('https://a.example/', [])).toEqual({ error: 'Choose at least one event.' });
  });
});
