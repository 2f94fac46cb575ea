/**
 * The Webhooks view's pure parts (webhooks-view.ts draws them): the rows of
 * the webhooks and of a webhook's deliveries as HTML (every value escaped),
 * and the form's body. No DOM, no I/O.
 */
import { escapeXml } from './svg';
import type { WebhookBody, WebhookDeliveryBody } from '../../contract/types';

/** A webhook and its deliveries as the API answers them (the contract's, src/contract/webhooks.ts), as far as this view reads them. */
export type WebhookView = Pick<WebhookBody, 'id' | 'url' | 'events' | 'state' | 'disabled_reason' | 'last_success_at'>;
export type DeliveryView = WebhookDeliveryBody;
export type AttemptView = WebhookDeliveryBody['attempts'][number];

const STATE_BADGE: Record<string, string> = { enabled: 'ok', delivered: 'ok', pending: 'muted', failed: 'bad', disabled: 'bad' };
const when = (iso: string | null): string => (iso === null ? '—' : escapeXml(iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')));

export function webhookRowHtml(w: WebhookView): string {
  const url = escapeXml(w.url);
  const state = w.state === 'enabled' ? 'enabled' : `disabled${w.disabled_reason ? `: ${w.disabled_reason}` : ''}`;
  return (
    `<tr data-webhook="${escapeXml(w.id)}"><td class="url"><code>${url}</code></td>` +
    `<td><span class="badge ${STATE_BADGE[w.state]}">${escapeXml(state)}</span></td>` +
    `<td class="events">${escapeXml(w.events.join(', '))}</td>` +
    `<td>${when(w.last_success_at)}</td>` +
    `<td class="links"><button type="button" class="secondary small" data-act="test" data-id="${escapeXml(w.id)}" aria-label="Send a test to ${url}">Test</button> ` +
    `<button type="button" class="secondary small" data-act="deliveries" data-id="${escapeXml(w.id)}" aria-label="Deliveries of ${url}">Deliveries</button> ` +
    `<button type="button" class="secondary small" data-act="delete" data-id="${escapeXml(w.id)}" aria-label="Delete ${url}">Delete</button></td></tr>`
  );
}

/** One attempt: its status (or "no answer"), its error, how long it took. */
export function attemptText(a: AttemptView): string {
  const what = a.status === null ? 'no answer' : `HTTP ${a.status}`;
  return `${what}${a.error !== null && a.status === null ? ` (${a.error})` : ''}, ${a.duration_ms} ms`;
}

export function deliveryRowHtml(d: DeliveryView): string {
  const attempts = d.attempts.length === 0 ? '<span class="muted">none yet</span>' : `<ol class="attempts">${d.attempts.map((a) => `<li title="${escapeXml(a.at)}">${escapeXml(attemptText(a))}</li>`).join('')}</ol>`;
  return (
    `<tr><td>${when(d.created_at)}</td><td><code>${escapeXml(d.event)}</code></td>` +
    `<td><span class="badge ${STATE_BADGE[d.state] ?? 'muted'}">${escapeXml(d.state)}</span></td>` +
    `<td>${attempts}</td><td>${when(d.next_attempt_at)}</td></tr>`
  );
}

/** The POST /webhooks body of the form, or what is wrong with it. */
export function webhookCreateBody(url: string, events: readonly string[]): { body: { url: string; events: string[] } } | { error: string } {
  const u = url.trim();
  if (!/^https?:\/\/[^/\s]/i.test(u)) return { error: 'Enter an http:// or https:// URL.' };
  if (events.length === 0) return { error: 'Choose at least one event.' };
  return { body: { url: u, events: [...events] } };
}
