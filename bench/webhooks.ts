/**
 * Webhook delivery (issue 32): the outbox and the delivery loop of
 * src/webhooks/, in this process over the embedded database (PGlite in
 * memory, as `npm start` runs it; `--pg URL` for PostgreSQL), sending with
 * the real sender and signing with standardwebhooks to a receiver in its
 * own process (`--role receiver`: a Bun.serve on 127.0.0.1 that answers 204
 * and notes when each webhook-id arrived; it verifies every 50th delivery
 * with Webhook.verify and counts failures).
 *
 *   burst       N messages written at once (one statement of `--batch`
 *               messages at a time) to one endpoint, then to 10 endpoints (N
 *               / 10 each): delivered messages per second from the first
 *               write to the last receipt, and each message's time from its
 *               outbox row (created_at) to its receipt, p50 / p99
 *   steady      `--rate` messages a second for `--seconds`, written one at a
 *               time as events are (the writer pokes the loop): event ->
 *               receipt p50 / p99 / max
 *   changes     100 000 proxy.down of one pool through the outbox's
 *               PoolEventsPort, then its round.completed: the CPU of this
 *               process (user + sys: the events, the messages' INSERT,
 *               PGlite's work, signing and sending) until the receiver has
 *               every message, in µs per proxy change, and the messages sent
 *
 * The machine is shared: the figures are noisy; the load average is
 * printed with them.
 *
 * Run: bun bench/webhooks.ts [--messages 2000] [--rate 200] [--seconds 10] [--changes 100000] [--pg URL]
 */
import { loadavg } from 'node:os';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { openDatabase, rowsOf, type Database } from '../db/client';
import { createAccount } from '../src/accounts/accounts';
import { createLogger } from '../src/log';
import { DeliveryLoop } from '../src/webhooks/delivery-loop';
import { WebhookOutbox } from '../src/webhooks/outbox';
import { sealingKey } from '../src/webhooks/seal';
import { WebhookService } from '../src/webhooks/service';
import { enqueue } from '../src/webhooks/store';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : (process.argv[i + 1] ?? dflt);
}

// ---- the receiver (its own process) -------------------------------------------

if (flag('role', '') === 'receiver') {
  const secrets = new Map<string, Webhook>();
  const got: [string, number][] = [];
  let n = 0;
  let bad = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/stats') {
        const body = JSON.stringify({ got, bad });
        got.length = 0;
        return new Response(body);
      }
      if (url.pathname === '/secret') {
        const { path, secret } = (await req.json()) as { path: string; secret: string };
        secrets.set(path, new Webhook(secret));
        return new Response(null, { status: 204 });
      }
      const body = await req.text();
      const id = req.headers.get('webhook-id') ?? '';
      got.push([id, Date.now()]);
      if (n++ % 50 === 0) {
        try {
          secrets.get(url.pathname)!.verify(body, Object.fromEntries(req.headers.entries()));
        } catch {
          bad++;
        }
      }
      return new Response(null, { status: 204 });
    },
  });
  process.stdout.write(`${server.port}\n`);
} else {
  await main();
}

async function main(): Promise<void> {
  const messages = Number(flag('messages', '2000'));
  const rate = Number(flag('rate', '200'));
  const seconds = Number(flag('seconds', '10'));
  const changes = Number(flag('changes', '100000'));
  const batch = Number(flag('batch', '100'));
  const pg = flag('pg', '');
  const log = createLogger('warn');
  console.log(`webhooks bench: load average ${loadavg().map((x) => x.toFixed(2)).join(' / ')} at the start`);

  const child = Bun.spawn([process.execPath, import.meta.path, '--role', 'receiver'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const base = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<{ got: [string, number][]; bad: number }> => (await fetch(`${base}/stats`)).json() as never;

  const database: Database = pg !== '' ? await openDatabase({ databaseUrl: pg }) : await openDatabase({ inMemory: true });
  const db = database.db;
  const key = sealingKey('bench-result-secret-0123456789abcdef');
  const loop = new DeliveryLoop({ db, nodeId: 'bench', key, allowPrivateTargets: true, log });
  const outbox = new WebhookOutbox({ db, log, onWritten: () => loop.poke() });
  const service = new WebhookService({ db, key, allowPrivateTargets: true });
  loop.start();

  const account = async (name: string, endpoints: number): Promise<{ id: string; pools: string[] }> => {
    const id = (await createAccount(db, { email: `${name}-${Date.now()}@bench.test` })).id;
    const pools: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      const pool = `benchpool${name.slice(0, 4)}${String(i).padStart(4, '0')}`;
      pools.push(pool);
      const made = await service.create(id, { url: `${base}/${name}/${i}`, events: ['pool.paused', 'pool.proxies_changed'], pools: [pool] });
      if (made === 'limit') throw new Error('limit');
      await fetch(`${base}/secret`, { method: 'POST', body: JSON.stringify({ path: `/${name}/${i}`, secret: made.secret }) });
    }
    return { id, pools };
  };
  const createdAt = async (): Promise<Map<string, number>> => {
    const rows = rowsOf<{ id: string; t: number }>(await db.execute(sql`SELECT id, (extract(epoch from created_at) * 1000)::float8 AS t FROM webhook_messages`));
    return new Map(rows.map((r) => [r.id, Number(r.t)]));
  };
  const pct = (xs: number[], p: number): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
  };
  const waitFor = async (want: number, ms = 600_000): Promise<[string, number][]> => {
    const all: [string, number][] = [];
    const end = Date.now() + ms;
    while (all.length < want) {
      if (Date.now() > end) throw new Error(`only ${all.length} of ${want} arrived`);
      await Bun.sleep(100);
      const s = await stats();
      if (s.bad > 0) throw new Error(`${s.bad} deliveries did not verify`);
      all.push(...s.got);
    }
    return all;
  };
  const paused = (pool: string) => ({ pool, at: new Date().toISOString(), counts: { total: 1, working: 0, failed: 1, unchecked: 0 }, reason: 'owner' });

  // ---- burst ---------------------------------------------------------------------
  for (const endpoints of [1, 10]) {
    const a = await account(`burst${endpoints}`, endpoints);
    const t0 = Date.now();
    for (let i = 0; i < messages; i += batch) {
      const n = Math.min(batch, messages - i);
      for (const pool of a.pools) {
        const share = Math.ceil(n / a.pools.length);
        await enqueue(db, a.id, 'pool.paused', pool, Array.from({ length: share }, () => paused(pool)), Date.now());
      }
      loop.poke();
    }
    const want = Math.ceil(batch / a.pools.length) * a.pools.length * Math.ceil(messages / batch);
    const got = await waitFor(want);
    const t1 = Math.max(...got.map((g) => g[1]));
    const created = await createdAt();
    const lat = got.map(([id, at]) => at - (created.get(id) ?? NaN));
    console.log(
      `burst, ${endpoints} endpoint(s): ${want} messages in ${((t1 - t0) / 1000).toFixed(2)} s = ${Math.round(want / ((t1 - t0) / 1000))} messages/s; ` +
        `outbox row -> receipt p50 ${Math.round(pct(lat, 50))} ms, p99 ${Math.round(pct(lat, 99))} ms`,
    );
  }

  // ---- steady --------------------------------------------------------------------
  {
    const a = await account('steady', 1);
    const pool = a.pools[0]!;
    const total = rate * seconds;
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      await outbox.poolState(a.id, { ...paused(pool), event: 'pool.paused', reason: 'owner' });
    }
    const got = await waitFor(total);
    const created = await createdAt();
    const lat = got.map(([id, at]) => at - (created.get(id) ?? NaN));
    console.log(`steady, ${rate}/s for ${seconds} s to one endpoint: event -> receipt p50 ${Math.round(pct(lat, 50))} ms, p99 ${Math.round(pct(lat, 99))} ms, max ${Math.round(Math.max(...lat))} ms`);
  }

  // ---- 100 000 proxy changes --------------------------------------------------------
  {
    const a = await account('changes', 1);
    const pool = a.pools[0]!;
    const port = outbox.poolEvents();
    const counts = { total: changes, working: 0, failed: changes, unchecked: 0 };
    const at = new Date().toISOString();
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < changes; i++) {
      port.publish(a.id, { pool, event: 'proxy.down', at, proxy: { host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 8080, hasAuth: false }, counts, error: { code: 'timeout', message: 'timeout: no answer within 5000 ms' } });
    }
    port.publish(a.id, { pool, event: 'round.completed', at, counts, round: { checked: changes, working: 0, failed: changes, not_tried: 0, charged: changes } });
    await outbox.drain();
    const written = performance.now();
    const cpuWritten = process.cpuUsage(cpu0);
    const want = Math.ceil(changes / 1000);
    await waitFor(want);
    const cpu = process.cpuUsage(cpu0);
    const us = (c: NodeJS.CpuUsage) => c.user + c.system;
    console.log(
      `changes: ${changes} proxy.down of one pool -> ${want} pool.proxies_changed messages; written in ${Math.round(written - w0)} ms (CPU ${Math.round(us(cpuWritten) / 1000)} ms), ` +
        `all received ${Math.round(performance.now() - w0)} ms after the first event; CPU of this process ${Math.round(us(cpu) / 1000)} ms = ${(us(cpu) / changes).toFixed(2)} µs per proxy change`,
    );
  }

  console.log(`load average ${loadavg().map((x) => x.toFixed(2)).join(' / ')} at the end`);
  await loop.stop();
  await database.close();
  child.kill();

}
