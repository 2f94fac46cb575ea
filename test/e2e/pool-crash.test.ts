/**
 * End to end, the real process (`bun src/main.ts`), on the database the
 * environment selects: a pool's owner killed with SIGKILL at random moments
 * (DECISIONS "Pools are actors": a crash loses at most the verdicts since the
 * last flush, and those were never charged).
 *
 * A pool of 120 proxies (60 answering through a fake HTTP proxy, 60 on a
 * refused port) at interval_s 1 with POOL_FLUSH_S=1 keeps its owner probing
 * and flushing all the time; the service is killed KILLS times, each after a
 * random 0.3-2.5 s (so at any point of its probing, reserving and flushing;
 * a flush of ~100 rows takes milliseconds, so only a few kills land inside
 * one), and started again each time (the start takes the lease with a new
 * token and refunds the old reservation beyond what it settled). At the end
 * a clean stop, then in the database: the units charged for the pool (its
 * reservations minus its refunds) equal the checks its durable copy counts,
 * no lease is live, and the proxies' checks only grew.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { openStore, ProcessBed, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const KILLS = 20;
const bed = new ProcessBed();
let elite: FakeServer;
let store: ServiceStore;
let refused = 0;

beforeAll(async () => {
  elite = await startHttpProxy();
  refused = await refusedPort();
  store = await bed.store();
});
afterAll(async () => {
  await bed.cleanup();
  await elite?.close();
}, 30_000);

const spawn = () => bed.spawn(store, { env: { BOOTSTRAP_CHECKS: '1000000', NODE_ID: 'pool-crash-node', POOL_MIN_INTERVAL_S: '1', POOL_FLUSH_S: '1', SHUTDOWN_GRACE_MS: '500' }, readyTimeoutMs: 30_000 });

test(`kill -9 at ${KILLS} random moments: charged == the durable checks, nothing left reserved`, async () => {
  let p = await spawn();
  const proxies = [
    ...Array.from({ length: 60 }, (_, i) => `u${i}:p@127.0.0.1:${elite.port}`),
    ...Array.from({ length: 60 }, (_, i) => `127.0.${1 + i}.1:${refused}`),
  ];
  const made = await call(`${p.url}/pools`, { method: 'POST', headers: { 'x-api-key': p.key }, json: { name: 'crash', proxies, interval_s: 1, timeout: 2000, https: false } });
  expect(made.status, made.text).toBe(201);
  const id = made.body.id as string;
  await until('the first checks', async () => (await call(`${p.url}/pools/${id}`, { headers: { 'x-api-key': p.key } })).body.counts.unchecked < 120, 15_000);
  for (let k = 0; k < KILLS; k++) {
    await Bun.sleep(300 + Math.floor(Math.random() * 2200));
    p.kill('SIGKILL');
    await p.exited;
    p = await spawn();
  }
  await Bun.sleep(1500);
  p.kill('SIGTERM');
  expect((await p.exited).code).toBe(0);

  const db = await openStore(store);
  try {
    const one = async (q: ReturnType<typeof sql>) => Number(Object.values(rowsOf<Record<string, unknown>>(await db.db.execute(q))[0]!)[0]);
    const charged = await one(sql`SELECT COALESCE(sum(CASE WHEN reason = 'reserve' THEN units ELSE -units END), 0)::float8 FROM quota_ledger WHERE job_id LIKE ${`pool:${id}:%`}`);
    const durable = await one(sql`SELECT COALESCE(sum(checks), 0)::float8 FROM pool_proxy_rows WHERE pool_id = ${id}`);
    const batches = await one(sql`SELECT COALESCE(sum(checked), 0)::float8 FROM pool_rounds WHERE pool_id = ${id}`);
    console.log(JSON.stringify({ kills: KILLS, charged, durable, batches }));
    expect(durable).toBeGreaterThan(0);
    expect(charged).toBe(durable);
    expect(batches).toBe(durable);
    expect(await one(sql`SELECT count(*)::float8 FROM pool_leases WHERE expires_at > now()`)).toBe(0);
    // the account's balance agrees: the bootstrap grant minus what the pool was charged
    expect(await one(sql`SELECT (root_balance + temp_balance)::float8 FROM accounts a JOIN pools p ON p.account_id = a.id WHERE p.id = ${id}`)).toBe(1_000_000 - charged);
  } finally {
    await db.close();
  }
}, 300_000);
