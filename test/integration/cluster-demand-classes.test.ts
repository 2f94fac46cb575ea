/**
 * src/cluster/demand.ts with priority classes, over a real nats-server: two
 * API nodes' DemandBoards on one pc_demand bucket, each wired to its own
 * RegionScheduler as the composition root wires them (capacity: the board's
 * share; backgroundCapacityFor: its backgroundWindow; demandOf /
 * backgroundOf / reserveOf: the scheduler's). Node A runs a big background
 * round in a region of 200 live slots; node B then gets a big check: B's
 * window ignores A's background (its checks come first), A stops granting
 * background as soon as it hears of B's checks (nothing revoked), and takes
 * the room back once B's demand is gone. Slots are simulated: nothing probes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { DemandBoard } from '../../src/cluster/demand';
import { connectNats, openDemandBucket } from '../../src/cluster/nats';
import { RegionScheduler, type JobHandle } from '../../src/jobs/scheduler';
import { memoryLogger } from '../../src/log';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';

const SLOTS = 200;
const HEARTBEAT_MS = 100;

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

interface Node {
  scheduler: RegionScheduler;
  board: DemandBoard;
  nc: NatsConnection;
}

describe.skipIf(!HAVE_NATS_SERVER)('demand board with priority classes (real NATS)', () => {
  let nats: NatsServer;
  const nodes: Node[] = [];

  async function node(name: string): Promise<Node> {
    const log = memoryLogger('warn');
    const nc = await connectNats(nats.url, `test-${name}`, log);
    const board = await DemandBoard.start({
      kv: await openDemandBucket(nc, 10 * HEARTBEAT_MS),
      node: name,
      ttlMs: 10 * HEARTBEAT_MS,
      heartbeatMs: HEARTBEAT_MS,
      regions: ['us1'],
      capacity: () => SLOTS,
      log,
    });
    const scheduler = new RegionScheduler((r) => board.share(r), { minGrant: 32, jobShare: 0.95, backgroundCapacityFor: (r) => board.backgroundWindow(r) });
    board.follow({
      demandOf: (r) => scheduler.demand(r),
      backgroundOf: (r) => scheduler.demand(r, 'background'),
      reserveOf: (slots) => scheduler.checkReserve(slots),
      onChange: (r) => scheduler.poke(r),
    });
    const n = { scheduler, board, nc };
    nodes.push(n);
    return n;
  }

  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    for (const n of nodes) {
      await n.board.stop();
      await n.nc.close();
    }
    await nats?.stop();
  });

  test('a check on another node comes before a background round; the round takes the room back afterwards', async () => {
    const a = await node('a');
    const b = await node('b');
    const reserve = a.scheduler.checkReserve(SLOTS); // max(H 10, 200 - 180, 25) = 25
    expect(reserve).toBe(25);

    let bgGranted = 0;
    const round: JobHandle = a.scheduler.register('round', 'us1', 100_000, (n) => (bgGranted += n), 'background');
    a.board.nudge();
    expect(round.inFlight).toBe(SLOTS - reserve); // alone: everything but the checks' reserve

    // B hears of A's round, yet its window for checks is every slot: A's background yields to it
    await until(() => b.board.backgroundWindow('us1') < SLOTS - reserve, 5000, 'B to hear of A\'s round');
    expect(b.board.share('us1')).toBe(SLOTS);

    let checkGranted = 0;
    const check = b.scheduler.register('check', 'us1', 5000, (n) => (checkGranted += n));
    b.board.nudge();
    expect(checkGranted).toBeGreaterThanOrEqual(reserve); // at once: what the agents keep free is the reserve

    // A hears of B's checks: its background window is 0; its releases are not granted again
    await until(() => a.board.backgroundWindow('us1') === 0, 5000, 'A to hear of B\'s check');
    const before = bgGranted;
    round.release(100);
    expect(bgGranted).toBe(before);
    expect(round.inFlight).toBe(SLOTS - reserve - 100);

    // B's check ends: A's window opens again and the poke from A's board refills the round
    check.cancel();
    check.release(check.inFlight);
    await until(() => round.inFlight === SLOTS - reserve, 5000, 'A to refill its round');
    round.cancel();
    round.release(round.inFlight);
  }, 20_000);
});
