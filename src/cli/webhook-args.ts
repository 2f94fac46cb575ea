/**
 * `proxycheck webhook <action> ...`: the webhook commands' arguments (args.ts
 * hands the `webhook` command's words and option values here). Pure: a
 * typed WebhookCommand, or a usage CliError.
 *
 *   webhook add <url> [--events E,E...] [--pools ID,ID...]
 *   webhook list
 *   webhook test <id>        webhook deliveries <id>        webhook rm <id>
 *
 * The URL, the events and the pools are checked by the server (its 400s say
 * what is wrong); here only their shape on the command line.
 */
import { isWebhookId } from '../webhooks/seal';
import { WEBHOOK_EVENTS } from '../webhooks/types';
import { usageError } from './exit-codes';

export const WEBHOOK_ACTIONS = Object.freeze(['add', 'list', 'test', 'deliveries', 'rm'] as const);
export type WebhookAction = (typeof WEBHOOK_ACTIONS)[number];
/** The options only webhook commands take (both of `webhook add`). */
export const WEBHOOK_OPTIONS = Object.freeze(['events', 'pools'] as const);

export type WebhookCommand =
  | { name: 'webhook'; action: 'add'; url: string; events?: string[]; pools?: string[] }
  | { name: 'webhook'; action: 'list' }
  | { name: 'webhook'; action: 'test' | 'deliveries' | 'rm'; id: string };

export type WebhookOptionValues = Partial<Record<(typeof WEBHOOK_OPTIONS)[number], string>>;

const list = (name: string, raw: string): string[] => {
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw usageError(`--${name} is a comma-separated list without empty items; got "${raw}"`);
  return items;
};

export function parseWebhookArgs(words: readonly string[], v: WebhookOptionValues): WebhookCommand {
  const [action, ...rest] = words;
  if (action === undefined) throw usageError(`webhook needs an action: ${WEBHOOK_ACTIONS.join(', ')}`);
  if (!(WEBHOOK_ACTIONS as readonly string[]).includes(action)) throw usageError(`unknown webhook action "${action}" (one of ${WEBHOOK_ACTIONS.join(', ')})`);
  const a = action as WebhookAction;
  if (a !== 'add') {
    const stray = WEBHOOK_OPTIONS.find((o) => v[o] !== undefined);
    if (stray !== undefined) throw usageError(`--${stray} is an option of "webhook add", not of "webhook ${a}"`);
  }
  switch (a) {
    case 'add': {
      const [url, ...more] = rest;
      if (url === undefined) throw usageError('webhook add needs the URL to send events to: webhook add https://example.com/hook');
      if (more.length > 0) throw usageError(`"webhook add" takes one URL (got "${more[0]}")`);
      const c: WebhookCommand & { action: 'add' } = { name: 'webhook', action: 'add', url };
      if (v.events !== undefined) c.events = list('events', v.events);
      if (v.pools !== undefined) c.pools = list('pools', v.pools);
      return c;
    }
    case 'list':
      if (rest.length > 0) throw usageError(`"webhook list" takes no arguments (got "${rest[0]}")`);
      return { name: 'webhook', action: 'list' };
    default: {
      const [id, ...more] = rest;
      if (id === undefined) throw usageError(`webhook ${a} needs the webhook's id (\`proxycheck webhook list\` shows them)`);
      if (!isWebhookId(id)) throw usageError(`"${id}" is not a webhook id (wh_ and 20 lower-case letters and digits)`);
      if (more.length > 0) throw usageError(`"webhook ${a}" takes the webhook id only (got "${more[0]}")`);
      return { name: 'webhook', action: a, id };
    }
  }
}

export const WEBHOOK_USAGE = `usage: proxycheck webhook <action> [arguments] [options]

  A webhook is a URL the service POSTs events to, signed with Standard Webhooks
  (verify them with any of its libraries and the secret shown once by add).

  webhook add <url>               add one; prints its id and its secret (shown only now)
      --events E,E...                  of ${WEBHOOK_EVENTS.join(', ')}
                                       (default: the three pool events)
      --pools ID,ID...                 only these pools (default: all, future ones too)
  webhook list                    the account's webhooks: state, events, URL, last success
  webhook test <id>               send a webhook.test event now
  webhook deliveries <id>         its last 100 deliveries with their attempts
  webhook rm <id>                 delete it

  --json prints the API's JSON.`;
