/**
 * `proxycheck webhook ...` (webhook-args.ts parses it): each action is one
 * call of the webhook routes (docs/API.md "Webhooks") and a rendering, or
 * with --json the API's JSON on standard output. Another account's webhook,
 * or none, is the server's 404: exit 5, as the other commands.
 */
import type { ApiClient, WebhookDeliveryBody, WebhookBody } from './api-client';
import type { GlobalOptions } from './args';
import { EXIT } from './exit-codes';
import type { CliIo } from './io';
import { table } from './tables';
import type { WebhookCommand } from './webhook-args';

const json = (io: CliIo, v: unknown) => io.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

export async function runWebhook(command: WebhookCommand, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const signal = io.signal;
  switch (command.action) {
    case 'add': {
      const body: Record<string, unknown> = { url: command.url };
      if (command.events !== undefined) body.events = command.events;
      if (command.pools !== undefined) body.pools = command.pools;
      const w = await client.createWebhook(body, signal);
      if (g.json) json(io, w);
      else io.stdout.write(`${renderAdded(w)}\n`);
      return EXIT.OK;
    }
    case 'list': {
      const webhooks = await client.webhooks(signal);
      if (g.json) json(io, { webhooks });
      else io.stdout.write(`${renderWebhooks(webhooks)}\n`);
      return EXIT.OK;
    }
    case 'test': {
      const r = await client.testWebhook(command.id, signal);
      if (g.json) json(io, r);
      else io.stdout.write(`Sent a webhook.test event to ${command.id}; see proxycheck webhook deliveries ${command.id}\n`);
      return EXIT.OK;
    }
    case 'deliveries': {
      const deliveries = await client.webhookDeliveries(command.id, signal);
      if (g.json) json(io, { deliveries });
      else io.stdout.write(`${renderDeliveries(deliveries)}\n`);
      return EXIT.OK;
    }
    case 'rm': {
      await client.deleteWebhook(command.id, signal);
      if (g.json) json(io, { id: command.id, deleted: true });
      else io.stdout.write(`Deleted webhook ${command.id}.\n`);
      return EXIT.OK;
    }
  }
}

export function renderAdded(w: WebhookBody & { secret: string }): string {
  return [
    `Added webhook ${w.id} -> ${w.url}`,
    `events: ${w.events.join(', ')}; pools: ${w.pools === null ? 'all' : w.pools.join(', ')}`,
    `secret: ${w.secret}`,
    'Keep the secret: it is shown only now (verify deliveries with a Standard Webhooks library).',
  ].join('\n');
}

export function renderWebhooks(webhooks: readonly WebhookBody[]): string {
  if (webhooks.length === 0) return 'No webhooks yet. Add one: proxycheck webhook add https://example.com/hook';
  const rows = webhooks.map((w) => [w.id, w.state === 'enabled' ? 'enabled' : `disabled: ${w.disabled_reason ?? ''}`, w.events.join(','), w.url, w.last_success_at ?? '-']);
  return table([['id', 'state', 'events', 'url', 'last success'], ...rows], ['l', 'l', 'l', 'l', 'l'], { header: true });
}

/** One row per delivery: when, event, state, its attempts' statuses (- for no answer), next try. */
export function renderDeliveries(deliveries: readonly WebhookDeliveryBody[]): string {
  if (deliveries.length === 0) return 'No deliveries yet (proxycheck webhook test <id> sends one).';
  const rows = deliveries.map((d) => [
    d.created_at,
    d.event,
    d.state,
    d.attempts.map((a) => (a.status === null ? '-' : String(a.status))).join(' ') || '-',
    d.attempts.at(-1)?.error ?? '',
    d.next_attempt_at ?? '-',
  ]);
  return table([['created', 'event', 'state', 'attempts', 'last error', 'next try'], ...rows], ['l', 'l', 'l', 'l', 'l', 'l'], { header: true });
}
