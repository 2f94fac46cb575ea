/**
 * End to end: stopping always ends (src/main.ts).
 *   - A second SIGTERM while the first waits for its grace exits at once
 *     (exit 1); the job it cut off is refunded in full at the next start.
 *   - With PostgreSQL: a database that stops answering mid-shutdown (a TCP
 *     relay between the service and the server that freezes) cannot hang the
 *     process: it exits 10 s after the grace (exit 1); the next start, with
 *     the database answering again, refunds the job in full.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Socket, TCPSocketListener } from 'bun';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { ProcessBed, serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/db';
import { call } from '../helpers/service';

const BALANCE = 1000;
let hole: FakeServer;
const bed = new ProcessBed();

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
});
afterAll(async () => {
  await bed.cleanup();
  await hole?.close();
});

const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.9.${1 + i}:${hole.port}`);
const me = async (p: ServiceProcess) => (await call(`${p.url}/me`, { headers: { 'x-api-key': p.key } })).body;

// The restart is the same node (NODE_ID): on PostgreSQL it takes its previous run's jobs at start.
async function start(store: ServiceStore, env: Record<string, string>): Promise<ServiceProcess> {
  const p = await spawnService(store, { env: { BOOTSTRAP_CHECKS: String(BALANCE), NODE_ID: 'deadline-node', ...env } });
  bed.spawned.push(p);
  return p;
}

async function waitFor(cond: () => boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** Starts a 20-black-hole job and resolves once its probes are in flight. */
async function jobInFlight(p: ServiceProcess, b: number): Promise<void> {
  const before = hole.open();
  void fetch(`${p.url}/check`, {
    method: 'POST',
    headers: { 'x-api-key': p.key, 'content-type': 'application/json' },
    body: JSON.stringify({ proxies: holes(20, b), timeout: 15_000 }),
  }).catch(() => {});
  await waitFor(() => hole.open() >= before + 20, 10_000, 'the job to probe');
}

test('a second SIGTERM exits at once; the cut-off job is refunded in full at the next start', async () => {
  const store = await serviceStore();
  bed.stores.push(store);
  const p = await start(store, { SHUTDOWN_GRACE_MS: '60000' });
  await jobInFlight(p, 41);
  p.kill('SIGTERM');
  await p.waitForLog((l) => l.msg === 'signal received, shutting down', 5000);
  await Bun.sleep(300);
  let exited = false;
  void p.exited.then(() => (exited = true));
  await Bun.sleep(0);
  expect(exited).toBe(false); // the first signal waits for the 60 s grace
  const t0 = performance.now();
  p.kill('SIGTERM');
  const { code, signal } = await p.exited;
  expect(signal).toBeNull();
  expect(code).toBe(1);
  expect(performance.now() - t0).toBeLessThan(2000);
  expect(p.logs.some((l) => l.msg === 'forced exit')).toBe(true);

  const q = await start(store, {});
  const m = await me(q);
  expect(m.user.checks).toBe(BALANCE);
  expect(m.history[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
  q.kill('SIGTERM');
  expect((await q.exited).code).toBe(0);
}, 40_000);

/** A TCP relay to `target` that can freeze: frozen, it keeps every connection open and forwards nothing. */
async function freezableRelay(target: { host: string; port: number }) {
  let frozen = false;
  const peers = new Map<Socket<unknown>, Socket<unknown>>();
  const listener: TCPSocketListener<unknown> = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      async open(client) {
        client.pause();
        const upstream = await Bun.connect({
          hostname: target.host,
          port: target.port,
          socket: {
            data: (_s, d) => void (!frozen && client.write(d)),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
        peers.set(client, upstream);
        client.resume();
      },
      data: (client, d) => void (!frozen && peers.get(client)?.write(d)),
      close: (client) => void peers.get(client)?.end(),
      error: (client) => void peers.get(client)?.end(),
    },
  });
  return {
    port: listener.port,
    freeze: () => (frozen = true),
    close: () => {
      for (const [c, u] of peers) {
        c.end();
        u.end();
      }
      listener.stop(true);
    },
  };
}

test.if(testDatabaseUrl() !== undefined)(
  'a database that stops answering mid-shutdown cannot hang the process: it exits 10 s after the grace',
  async () => {
    const store = await serviceStore();
    bed.stores.push(store);
    const url = new URL(store.databaseUrl!);
    const relay = await freezableRelay({ host: url.hostname, port: Number(url.port || 5432) });
    try {
      const viaRelay = new URL(store.databaseUrl!);
      viaRelay.hostname = '127.0.0.1';
      viaRelay.port = String(relay.port);
      const p = await start(store, { DATABASE_URL: viaRelay.toString(), SHUTDOWN_GRACE_MS: '0' }); // the deadline: 0 + 10 s
      await jobInFlight(p, 42);
      relay.freeze(); // the job's settlement will never get an answer
      const t0 = performance.now();
      p.kill('SIGTERM');
      const { code } = await p.exited;
      const ms = performance.now() - t0;
      expect(code).toBe(1);
      expect(ms).toBeGreaterThan(9_500);
      expect(ms).toBeLessThan(14_000);
      expect(p.logs.some((l) => l.msg === 'forced exit')).toBe(true);

      const q = await start(store, {}); // straight to the database
      const m = await me(q);
      expect(m.user.checks).toBe(BALANCE);
      expect(m.history[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
      q.kill('SIGTERM');
      expect((await q.exited).code).toBe(0);
    } finally {
      relay.close();
    }
  },
  40_000,
);
