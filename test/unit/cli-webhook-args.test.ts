/** `proxycheck webhook ...` command lines (src/cli/webhook-args.ts through args.ts) and the renderings of webhook-command.ts. */
import { describe, expect, test } from 'bun:test';
import { parseCommandLine } from '../../src/cli/args';
import { CliError } from '../../src/cli/exit-codes';
import { renderDeliveries, renderWebhooks } from '../../src/cli/webhook-command';

const ID = 'wh_abcdefghij0123456789';
const usage = (argv: string[]): string => {
  try {
    parseCommandLine(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return (e as CliError).message;
  }
  throw new Error('expected a usage error');
};

describe('webhook command lines', () => {
  test('add, list, test, deliveries, rm', () => {
    expect(parseCommandLine(['webhook', 'add', 'https://a.example/h']).command).toEqual({ name: 'webhook', action: 'add', url: 'https://a.example/h' });
    expect(parseCommandLine(['webhook', 'add', 'https://a.example/h', '--events', 'pool.paused, check.completed', '--pools', 'abcdefghij']).command).toEqual({
      name: 'webhook',
      action: 'add',
      url: 'https://a.example/h',
      events: ['pool.paused', 'check.completed'],
      pools: ['abcdefghij'],
    });
    expect(parseCommandLine(['--json', 'webhook', 'list']).command).toEqual({ name: 'webhook', action: 'list' });
    for (const action of ['test', 'deliveries', 'rm'] as const) expect(parseCommandLine(['webhook', action, ID]).command).toEqual({ name: 'webhook', action, id: ID });
    expect(parseCommandLine(['help', 'webhook']).command).toEqual({ name: 'help', topic: 'webhook' });
  });

  test('usage errors name what is wrong', () => {
    expect(usage(['webhook'])).toBe('webhook needs an action: add, list, test, deliveries, rm');
    expect(usage(['webhook', 'send'])).toBe('unknown webhook action "send" (one of add, list, test, deliveries, rm)');
    expect(usage(['webhook', 'add'])).toStartWith('webhook add needs the URL');
    expect(usage(['webhook', 'test'])).toStartWith("webhook test needs the webhook's id");
    expect(usage(['webhook', 'rm', 'wh_x'])).toBe('"wh_x" is not a webhook id (wh_ and 20 lower-case letters and digits)');
    expect(usage(['webhook', 'list', '--events', 'pool.paused'])).toBe('--events is an option of "webhook add", not of "webhook list"');
    expect(usage(['webhook', 'add', 'https://a.example/', '--events', 'a,,b'])).toBe('--events is a comma-separated list without empty items; got "a,,b"');
    expect(usage(['webhook', 'add', 'https://a.example/', '--type', 'http'])).toBe('--type is not an option of "webhook"');
    expect(usage(['pool', 'list', '--events', 'x'])).toBe('--events is an option of "webhook add", not of "pool"');
  });
});

describe('renderings', () => {
  test('the list and the deliveries as tables; none says what to do', () => {
    expect(renderWebhooks([])).toContain('proxycheck webhook add');
    const list = renderWebhooks([
      { id: ID, url: 'https://a.example/h', events: ['pool.paused'], pools: null, state: 'disabled', disabled_reason: 'no successful delivery for 3 days of attempts', created_at: '2026-01-01T00:00:00.000Z', last_success_at: null },
    ]);
    expect(list).toContain('disabled: no successful delivery for 3 days of attempts');
    expect(list).toContain('https://a.example/h');
    const d = renderDeliveries([
      {
        id: 'msg_1',
        event: 'webhook.test',
        created_at: '2026-01-01T00:00:00.000Z',
        attempts: [
          { at: '2026-01-01T00:00:00.000Z', status: null, error: 'connect_failed: ECONNREFUSED', duration_ms: 1 },
          { at: '2026-01-01T00:00:05.000Z', status: 500, error: 'HTTP 500', duration_ms: 3 },
        ],
        state: 'pending',
        next_attempt_at: '2026-01-01T00:05:05.000Z',
      },
    ]);
    expect(d).toContain('- 500');
    expect(d).toContain('HTTP 500');
    expect(d).toContain('2026-01-01T00:05:05.000Z');
    expect(renderDeliveries([])).toContain('proxycheck webhook test');
  });
});
