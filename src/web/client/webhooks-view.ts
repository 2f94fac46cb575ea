/**
 * The "Webhooks" view (#/webhooks), composed of its regions: the account's
 * webhooks (webhooks-list.ts: send a test, show deliveries, delete), the
 * chosen webhook's recent deliveries with their attempts, read again every
 * 2 s while the view is open (webhook-deliveries.ts), and the form that adds
 * one, its secret shown once (webhook-form.ts). Pure parts: webhook-format.ts.
 */
import { apiGet, apiPost, apiSend } from './api';
import { byId, setText } from './dom';
import { mountWebhookDeliveries, webhookDeliveriesHtml } from './webhook-deliveries';
import type { WebhookView } from './webhook-format';
import { mountWebhookForm, webhookFormHtml } from './webhook-form';
import { mountWebhooksList, webhooksListHtml, type WebhookAction } from './webhooks-list';
import { viewContext, type ViewDeps } from './view-context';

export const WEBHOOKS_VIEW_IDS = Object.freeze({ view: 'view-webhooks', error: 'webhooks-error' });

export function webhooksViewHtml(): string {
  const top = `<section id="view-webhooks" class="view" aria-labelledby="webhooks-h" hidden>
  <h1 id="webhooks-h" tabindex="-1">Webhooks</h1>
  <p class="hint">Pool changes and finished async checks pushed to your URL, signed with Standard Webhooks (docs: API, "Webhooks").</p>
  <p id="webhooks-error" class="error" role="alert"></p>`;
  return [top, webhooksListHtml(), webhookDeliveriesHtml(), webhookFormHtml(), '</section>'].join('\n');
}

export type WebhooksViewDeps = ViewDeps;

export function setupWebhooksView(deps: WebhooksViewDeps) {
  const ctx = viewContext(deps);
  const err = byId(WEBHOOKS_VIEW_IDS.error);
  const list = mountWebhooksList((action, id) => act(action, id));

  /** Reads the webhooks and shows them; null when that failed. */
  const loadList = async (): Promise<WebhookView[] | null> => {
    const k = ctx.key();
    if (k === null) return null;
    const r = await apiGet('/webhooks', k);
    if (!r.ok) {
      ctx.failed(r.status, r.body, err);
      return null;
    }
    setText(err, '');
    const webhooks = (r.body as { webhooks: WebhookView[] }).webhooks;
    list.render(webhooks);
    return webhooks;
  };
  const deliveries = mountWebhookDeliveries(ctx, loadList, err);
  mountWebhookForm(ctx, async () => void (await loadList()));

  async function act(action: WebhookAction, id: string): Promise<void> {
    const k = ctx.key();
    if (k === null) return;
    if (action === 'deliveries') return deliveries.show(id);
    const r = action === 'test' ? await apiPost(`/webhooks/${id}/test`, k, {}) : await apiSend('DELETE', `/webhooks/${id}`, k);
    if (!r.ok) return ctx.failed(r.status, r.body, err);
    if (action === 'test') return deliveries.show(id);
    deliveries.forget(id);
    await loadList();
  }

  return {
    load: async (): Promise<void> => {
      await loadList();
      await deliveries.reload();
    },
    leave: (): void => deliveries.stop(),
  };
}
