/**
 * The "Webhooks" view (#/webhooks): the account's webhooks (send a test,
 * show the recent deliveries with their attempts, delete), and a form that
 * adds one (its secret shown once, right under the form). The deliveries of
 * the chosen webhook (and the list: last success, state) are read again
 * every DELIVERIES_REFRESH_MS while the view is open, so a test's attempts
 * show as they happen. Pure parts:
 * webhook-format.ts; markup: src/web/webhooks-markup.ts.
 */
import { apiGet, apiPost, apiSend } from './api';
import { type ButtonEl, type Elem, type InputEl, type TableEl } from './browser';
import { byId, setText, show } from './dom';
import { errorText } from './format';
import { deliveryRowHtml, webhookCreateBody, webhookRowHtml, type DeliveryView, type WebhookView } from './webhook-format';

const DELIVERIES_REFRESH_MS = 2000;

export interface WebhooksViewDeps {
  key: () => string | null;
  onUnauthorized: () => void;
}

export function setupWebhooksView(deps: WebhooksViewDeps) {
  const err = byId('webhooks-error');
  const tbody = byId<TableEl>('webhooks-table').tBodies[0]!;
  const empty = byId('webhooks-empty');
  const panel = byId('webhook-deliveries');
  const dtitle = byId('wd-h');
  const dbody = byId<TableEl>('wd-table').tBodies[0]!;
  const dempty = byId('wd-empty');
  const form = byId('webhook-form');
  const formError = byId('webhook-form-error');
  const secretOut = byId('webhook-secret');
  let webhooks: WebhookView[] = [];
  let open: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const key = (): string | null => {
    const k = deps.key();
    if (k === null) deps.onUnauthorized();
    return k;
  };
  const failed = (status: number, body: unknown, where: Elem = err): void => {
    if (status === 401) deps.onUnauthorized();
    else setText(where, errorText(status, body));
  };

  async function loadList(): Promise<void> {
    const k = key();
    if (k === null) return;
    const r = await apiGet('/webhooks', k);
    if (!r.ok) return failed(r.status, r.body);
    setText(err, '');
    webhooks = (r.body as { webhooks: WebhookView[] }).webhooks;
    tbody.innerHTML = webhooks.map(webhookRowHtml).join('');
    show(empty, webhooks.length === 0);
  }

  async function loadDeliveries(): Promise<void> {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const id = open;
    const k = key();
    if (id === null || k === null) return;
    const r = await apiGet(`/webhooks/${id}/deliveries`, k);
    if (open !== id) return;
    if (!r.ok) return failed(r.status, r.body);
    const list = (r.body as { deliveries: DeliveryView[] }).deliveries;
    // the list's last success and state move with the deliveries
    await loadList();
    if (open !== id) return;
    const w = webhooks.find((x) => x.id === id);
    setText(dtitle, `Recent deliveries${w ? ` to ${w.url}` : ''}`);
    dbody.innerHTML = list.map(deliveryRowHtml).join('');
    show(dempty, list.length === 0);
    show(panel, true);
    timer = setTimeout(() => void loadDeliveries(), DELIVERIES_REFRESH_MS);
  }

  tbody.addEventListener('click', async (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-act]');
    const id = btn?.dataset.id;
    const act = btn?.dataset.act;
    const k = key();
    if (btn === null || btn === undefined || id === undefined || k === null) return;
    if (act === 'test') {
      const r = await apiPost(`/webhooks/${id}/test`, k, {});
      if (!r.ok) return failed(r.status, r.body);
      open = id;
      await loadDeliveries();
    } else if (act === 'deliveries') {
      open = id;
      await loadDeliveries();
    } else if (act === 'delete') {
      const r = await apiSend('DELETE', `/webhooks/${id}`, k);
      if (!r.ok) return failed(r.status, r.body);
      if (open === id) {
        open = null;
        show(panel, false);
      }
      await loadList();
    }
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    setText(formError, '');
    setText(secretOut, '');
    const url = byId<InputEl>('webhook-url').value;
    const events = [...form.querySelectorAll<InputEl>('input[name="events"]')].filter((i) => i.checked).map((i) => i.value);
    const made = webhookCreateBody(url, events);
    if ('error' in made) return setText(formError, made.error);
    const k = key();
    if (k === null) return;
    const r = await apiPost('/webhooks', k, made.body);
    if (!r.ok) return failed(r.status, r.body, formError);
    const w = r.body as WebhookView & { secret: string };
    setText(secretOut, `Added. Its signing secret (shown only now, keep it): ${w.secret}`);
    byId<InputEl>('webhook-url').value = '';
    await loadList();
  });

  return {
    load: async (): Promise<void> => {
      await loadList();
      if (open !== null) await loadDeliveries();
    },
    leave: (): void => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
