/**
 * src/jobs/node-lease.ts on the database the environment selects: register,
 * renew every lease/3, the local view of the lease (a lapsed lease is renewed
 * before a reservation, refused when it cannot be), a row that vanished,
 * release at a clean stop; generateNodeId.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { nodes } from '../../db/schema';
import { isServiceError } from '../../src/errors';
import { generateNodeId, NodeLease } from '../../src/jobs/node-lease';
import { memoryLogger } from '../../src/log';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { rejection } from '../helpers/rejection';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});

const identity = (id: string) => ({ id, version: '9.9.9', host: 'test-host', pid: 4242 });
const row = async (id: string) => (await tdb.db.select().from(nodes).where(eq(nodes.id, id)))[0];
/** ms left of the node's lease by the database's clock. */
const msLeft = async (id: string) => {
  const [r] = (await tdb.db.select({ ms: sql<number>`(extract(epoch from ${nodes.leaseUntil} - now()) * 1000)::float8` }).from(nodes).where(eq(nodes.id, id))).map((x) => Number(x.ms));
  return r;
};

test('generateNodeId: the host name\'s first label and 8 hex digits, new each time', () => {
  expect(generateNodeId('web-3.eu.example.com')).toMatch(/^web-3-[0-9a-f]{8}$/);
  expect(generateNodeId('')).toMatch(/^node-[0-9a-f]{8}$/);
  expect(generateNodeId('_x!')).toMatch(/^x-[0-9a-f]{8}$/);
  expect(generateNodeId('h')).not.toBe(generateNodeId('h'));
  expect(generateNodeId()).toMatch(/^[A-Za-z0-9][A-Za-z0-9-]*-[0-9a-f]{8}$/);
});

describe('NodeLease', () => {
  test('registers with its identity and a lease on the database clock, renews every third of it, deletes its row at release', async () => {
    const log = memoryLogger();
    const { lease, registration } = await NodeLease.start({ db: tdb.db, node: identity('lease-a'), leaseMs: 60_000, renewEveryMs: 40, log });
    expect(registration.wasLive).toBe(false);
    expect(registration.leaseMsLeft).toBeGreaterThan(55_000);
    expect(lease.id).toBe('lease-a');
    expect(lease.live).toBe(true);
    const first = await row('lease-a');
    expect(first).toMatchObject({ version: '9.9.9', host: 'test-host', pid: 4242 });
    expect(await msLeft('lease-a')).toBeGreaterThan(55_000);
    await Bun.sleep(150);
    expect((await row('lease-a'))!.renewedAt.getTime()).toBeGreaterThan(first!.renewedAt.getTime());
    await lease.release();
    await lease.release(); // safe twice
    expect(await row('lease-a')).toBeUndefined();
    expect(lease.live).toBe(false);
    expect(await rejection(lease.ensureLive())).toMatchObject({ code: 'node_lease_lost' });
    expect(log.lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
  });

  test('a second registration of a live id says so (a restart within the lease, or NODE_ID not unique)', async () => {
    const a = await NodeLease.start({ db: tdb.db, node: identity('lease-b'), leaseMs: 60_000, log: memoryLogger() });
    const b = await NodeLease.start({ db: tdb.db, node: { ...identity('lease-b'), pid: 5 }, leaseMs: 60_000, log: memoryLogger() });
    expect(a.registration.wasLive).toBe(false);
    expect(b.registration.wasLive).toBe(true);
    expect((await row('lease-b'))!.pid).toBe(5);
    await a.lease.release();
    await b.lease.release();
  });

  test('a lapsed lease (by its own clock) is renewed before a reservation goes ahead', async () => {
    let t = 1_000_000;
    const { lease } = await NodeLease.start({ db: tdb.db, node: identity('lease-c'), leaseMs: 10_000, renewEveryMs: 3_600_000, now: () => t, log: memoryLogger() });
    t += 9_999;
    expect(lease.live).toBe(true);
    t += 2;
    expect(lease.live).toBe(false);
    await lease.ensureLive();
    expect(lease.live).toBe(true);
    await lease.release();
  });

  test('a row that vanished (pruned while unreachable) is registered again, with a warning', async () => {
    const log = memoryLogger();
    const { lease } = await NodeLease.start({ db: tdb.db, node: identity('lease-d'), leaseMs: 60_000, renewEveryMs: 3_600_000, log });
    await tdb.db.delete(nodes).where(eq(nodes.id, 'lease-d'));
    expect(await lease.renewNow()).toBe(true);
    expect(await row('lease-d')).toBeDefined();
    expect(log.lines.some((l) => l.msg?.toString().startsWith('node row was gone'))).toBe(true);
    await lease.release();
  });

  test('a database that does not answer: the lease lapses (logged once), reservations are refused, and it comes back when the database does', async () => {
    const own = await freshDatabase();
    let t = 5_000_000;
    const log = memoryLogger();
    let failing = false;
    // a Db whose execute fails while `failing` (the renewal's one statement)
    const db = new Proxy(own.db, {
      get(target, p, r) {
        if (p === 'execute' && failing) return () => Promise.reject(new Error('connection refused'));
        return Reflect.get(target, p, r);
      },
    });
    try {
      const { lease } = await NodeLease.start({ db, node: identity('lease-e'), leaseMs: 1_000, renewEveryMs: 3_600_000, now: () => t, log });
      failing = true;
      expect(await lease.renewNow()).toBe(false); // still within the lease: a warning
      expect(lease.live).toBe(true);
      t += 1_001;
      expect(await lease.renewNow()).toBe(false);
      const err = await lease.ensureLive().catch((e: unknown) => e);
      expect(isServiceError(err, 'node_lease_lost')).toBe(true);
      expect(log.lines.filter((l) => l.msg === 'node lease renewal failed').length).toBe(2); // before the lapse, and ensureLive's try after it
      expect(log.lines.filter((l) => l.msg?.toString().startsWith('node lease lapsed')).length).toBe(1);
      failing = false;
      await lease.ensureLive();
      expect(lease.live).toBe(true);
      expect(log.lines.some((l) => l.msg === 'node lease restored')).toBe(true);
      failing = true;
      await lease.release(); // the delete fails: logged, never thrown (the lease expires by itself)
      expect(log.lines.some((l) => l.msg === 'releasing the node lease failed; it expires by itself')).toBe(true);
    } finally {
      await own.cleanup();
    }
  });
});
