/**
 * `proxycheck webhook ...` as a subprocess against the real service on
 * 127.0.0.1: add (the secret printed once), list, test (the receiver
 * verifies it), deliveries, rm; --json; a webhook of no one is exit 5, a
 * server's 400 exit 5 with its message.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli';
import { until } from '../helpers/process';
import { startTestService, type TestService } from '../helpers/service';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

let t: TestService;
let r: Receiver;
let dir: string;
beforeAll(async () => {
  t = await startTestService({ POOL_ROUNDS: 'false' });
  r = startReceiver();
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-hooks-'));
}, 60_000);
afterAll(async () => {
  await t?.stop();
  r?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

const cli = (args: string[]) =>
  runCli(args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), PROXYCHECK_URL: t.url, PROXYCHECK_API_KEY: t.key } });

test('add, list, test, deliveries, rm', async () => {
  const added = await cli(['webhook', 'add', r.url, '--events', 'pool.paused,check.completed']);
  expect([added.code, added.stderr]).toEqual([0, '']);
  const id = /Added webhook (wh_[a-z0-9]{20}) -> /.exec(added.stdout)?.[1] ?? '';
  const secret = /secret: (whsec_\S+)/.exec(added.stdout)?.[1] ?? '';
  expect(id).not.toBe('');
  r.setSecret(secret);
  const listed = await cli(['webhook', 'list']);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(id);
  expect(listed.stdout).not.toContain(secret);
  const asJson = JSON.parse((await cli(['--json', 'webhook', 'list'])).stdout);
  expect(asJson.webhooks[0]).toMatchObject({ id, events: ['pool.paused', 'check.completed'] });
  expect((await cli(['webhook', 'test', id])).code).toBe(0);
  await until('the test delivered', () => r.got.length === 1, 10_000);
  expect(r.got[0]).toMatchObject({ type: 'webhook.test', verified: true });
  await until('recorded', async () => JSON.parse((await cli(['--json', 'webhook', 'deliveries', id])).stdout).deliveries[0]?.state === 'delivered', 10_000);
  const d = await cli(['webhook', 'deliveries', id]);
  expect(d.stdout).toContain('webhook.test');
  expect(d.stdout).toContain('delivered');
  expect(d.stdout).toContain('204');
  expect((await cli(['webhook', 'rm', id])).stdout).toBe(`Deleted webhook ${id}.\n`);
  const gone = await cli(['webhook', 'test', id]);
  expect(gone.code).toBe(5);
  const bad = await cli(['webhook', 'add', 'ftp://x.example/']);
  expect(bad.code).toBe(5);
  expect(bad.stderr).toContain('url: expected an http or https URL');
}, 60_000);
