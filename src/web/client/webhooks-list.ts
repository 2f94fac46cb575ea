/**
 * The Webhooks page's list of the account's webhooks (URL, state with the
 * reason when disabled, events, last success) with each one's actions:
 * send a test, show its deliveries, delete.
 */
import type { ButtonEl, Elem, TableEl } from './browser';
import { byId, show } from './dom';
import { webhookRowHtml, type WebhookView } from './webhook-format';

export const WEBHOOKS_LIST_IDS = Object.freeze({ table: 'webhooks-table', empty: 'webhooks-empty' });

export function webhooksListHtml(): string {
  return `  <section class="panel" aria-labelledby="webhooks-list-h">
    <h2 id="webhooks-list-h">Your webhooks</h2>
    <p id="webhooks-empty" class="hint" hidden>No webhooks yet: add one below.</p>
    <div class="table-wrap" role="region" aria-labelledby="webhooks-list-h" tabindex="0">
      <table id="webhooks-table"><thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Events</th><th scope="col">Last success</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>
    </div>
  </section>`;
}

export type WebhookAction = 'test' | 'deliveries' | 'delete';

export function mountWebhooksList(act: (action: WebhookAction, id: string) => Promise<void>): { render(webhooks: readonly WebhookView[]): void } {
  const tbody = byId<TableEl>(WEBHOOKS_LIST_IDS.table).tBodies[0]!;
  const empty = byId(WEBHOOKS_LIST_IDS.empty);
  tbody.addEventListener('click', (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-act]');
    const id = btn?.dataset.id;
    const action = btn?.dataset.act;
    if (id !== undefined && (action === 'test' || action === 'deliveries' || action === 'delete')) void act(action, id);
  });
  return {
    render(webhooks) {
      tbody.innerHTML = webhooks.map(webhookRowHtml).join('');
      show(empty, webhooks.length === 0);
    },
  };
}
