/**
 * The chosen webhook's recent deliveries, each with its event, state, every
 * attempt and the next try; read again every DELIVERIES_REFRESH_MS while
 * the view is open (so a test's attempts show as they happen), the list
 * with them (its last success and state move with the deliveries).
 */
import { apiGet } from './api';
import type { Elem, TableEl } from './browser';
import { byId, setText, show } from './dom';
import type { ViewContext } from './view-context';
import { deliveryRowHtml, type DeliveryView, type WebhookView } from './webhook-format';

export const WEBHOOK_DELIVERIES_IDS = Object.freeze({ panel: 'webhook-deliveries', title: 'wd-h', table: 'wd-table', empty: 'wd-empty' });

const DELIVERIES_REFRESH_MS = 2000;

export function webhookDeliveriesHtml(): string {
  return `  <section id="webhook-deliveries" class="panel" aria-labelledby="wd-h" hidden>
    <h2 id="wd-h">Recent deliveries</h2>
    <p id="wd-empty" class="hint" hidden>No deliveries yet: send a test.</p>
    <div class="table-wrap" role="region" aria-labelledby="wd-h" tabindex="0">
      <table id="wd-table"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Next try</th></tr></thead><tbody></tbody></table>
    </div>
  </section>`;
}

/** `reloadList()`: reads the webhooks again (null: that failed); `err`: where a failure shows. */
export function mountWebhookDeliveries(ctx: ViewContext, reloadList: () => Promise<readonly WebhookView[] | null>, err: Elem) {
  const ids = WEBHOOK_DELIVERIES_IDS;
  const panel = byId(ids.panel);
  let open: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const stop = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };

  const render = (list: readonly DeliveryView[], w: WebhookView | undefined): void => {
    setText(byId(ids.title), `Recent deliveries${w ? ` to ${w.url}` : ''}`);
    byId<TableEl>(ids.table).tBodies[0]!.innerHTML = list.map(deliveryRowHtml).join('');
    show(byId(ids.empty), list.length === 0);
    show(panel, true);
  };

  const load = async (): Promise<void> => {
    stop();
    const id = open;
    const k = ctx.key();
    if (id === null || k === null) return;
    const r = await apiGet(`/webhooks/${id}/deliveries`, k);
    if (open !== id) return;
    if (!r.ok) return ctx.failed(r.status, r.body, err);
    const webhooks = await reloadList();
    if (open !== id) return;
    render((r.body as { deliveries: DeliveryView[] }).deliveries, webhooks?.find((x) => x.id === id));
    timer = setTimeout(() => void load(), DELIVERIES_REFRESH_MS);
  };

  return {
    /** Shows `id`'s deliveries (and keeps reading them). */
    show(id: string): Promise<void> {
      open = id;
      return load();
    },
    /** Reads the open webhook's deliveries again, if one is open. */
    reload: load,
    /** `id` was deleted: its panel goes. */
    forget(id: string): void {
      if (open !== id) return;
      open = null;
      stop();
      show(panel, false);
    },
    /** The view is left: no more reads until it is shown again. */
    stop,
  };
}
