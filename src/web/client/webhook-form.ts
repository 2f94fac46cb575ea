/**
 * The Webhooks page's "Add a webhook" form: a URL and the events to send,
 * checked in the page (webhook-format.ts webhookCreateBody) before POST
 * /webhooks; the new webhook's signing secret is shown once, under it.
 */
import { apiPost } from './api';
import type { InputEl } from './browser';
import { byId, setText } from './dom';
import type { ViewContext } from './view-context';
import { webhookCreateBody, type WebhookView } from './webhook-format';

export const WEBHOOK_FORM_IDS = Object.freeze({ form: 'webhook-form', url: 'webhook-url', error: 'webhook-form-error', secret: 'webhook-secret', submit: 'webhook-add' });

export function webhookFormHtml(): string {
  return `  <section class="panel" aria-labelledby="webhook-new-h">
    <h2 id="webhook-new-h">Add a webhook</h2>
    <form id="webhook-form" novalidate>
      <div class="field">
        <label for="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" maxlength="2048" autocomplete="off" spellcheck="false" placeholder="https://example.com/hook" required>
      </div>
      <fieldset class="field">
        <legend>Events</legend>
        <label><input type="checkbox" name="events" value="pool.proxies_changed" checked> Proxies up or down</label>
        <label><input type="checkbox" name="events" value="pool.paused" checked> Pool paused</label>
        <label><input type="checkbox" name="events" value="pool.resumed" checked> Pool resumed</label>
        <label><input type="checkbox" name="events" value="check.completed"> Async check finished</label>
      </fieldset>
      <p id="webhook-form-error" class="error" role="alert"></p>
      <p id="webhook-secret" class="hint" role="status"></p>
      <button type="submit" class="primary" id="webhook-add">Add webhook</button>
    </form>
  </section>`;
}

/** `onAdded`: a webhook was added (the list is read again). */
export function mountWebhookForm(ctx: ViewContext, onAdded: () => Promise<void>): void {
  const ids = WEBHOOK_FORM_IDS;
  const form = byId(ids.form);
  const formError = byId(ids.error);
  const secretOut = byId(ids.secret);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    setText(formError, '');
    setText(secretOut, '');
    const url = byId<InputEl>(ids.url);
    const events = [...form.querySelectorAll<InputEl>('input[name="events"]')].filter((i) => i.checked).map((i) => i.value);
    const made = webhookCreateBody(url.value, events);
    if ('error' in made) return setText(formError, made.error);
    const k = ctx.key();
    if (k === null) return;
    const r = await apiPost('/webhooks', k, made.body);
    if (!r.ok) return ctx.failed(r.status, r.body, formError);
    const w = r.body as WebhookView & { secret: string };
    setText(secretOut, `Added. Its signing secret (shown only now, keep it): ${w.secret}`);
    url.value = '';
    await onAdded();
  });
}
