import { expect, test } from 'bun:test';
import { QueueDepth, type QueueReading } from '../../src/cluster/queue-depth';
import { FakeClock } from '../helpers/fake-clock';

function reader() {
  const reads: string[] = [];
  const depth: Record<string, QueueReading> = { us1: { waiting: 3, delivered: 1 }, de1: { waiting: 0, delivered: 0 } };
  let fail = new Set<string>();
  let hang = new Set<string>();
  return {
    reads,
    depth,
    failOn: (...r: string[]) => (fail = new Set(r)),
    hangOn: (...r: string[]) => (hang = new Set(r)),
    read: async (region: string): Promise<QueueReading> => {
      reads.push(region);
      if (hang.has(region)) return new Promise(() => {});
      if (fail.has(region)) throw new Error('no consumer');
      return { ...depth[region]! };
    },
  };
}

test('reads every region once per maxAgeMs, however often it is asked; concurrent asks share one refresh', async () => {
  const clock = new FakeClock();
  const r = reader();
  const q = new QueueDepth({ regions: ['us1', 'de1'], read: r.read, maxAgeMs: 5000, clock });
  const [a, b] = await Promise.all([q.depth(), q.depth()]);
  expect(r.reads).toEqual(['us1', 'de1']);
  expect(a.get('us1')).toEqual({ waiting: 3, delivered: 1 });
  expect(b).toBe(a);
  r.depth.us1 = { waiting: 9, delivered: 2 };
  await clock.advance(4999);
  expect((await q.depth()).get('us1')).toEqual({ waiting: 3, delivered: 1 }); // cached
  expect(r.reads).toHaveLength(2);
  await clock.advance(1);
  expect((await q.depth()).get('us1')).toEqual({ waiting: 9, delivered: 2 });
  expect(r.reads).toHaveLength(4);
});

test('a region whose read fails or hangs keeps its last reading (none: left out); a hang costs at most timeoutMs', async () => {
  const clock = new FakeClock();
  const r = reader();
  r.failOn('de1');
  const q = new QueueDepth({ regions: ['us1', 'de1'], read: r.read, maxAgeMs: 10, timeoutMs: 50, clock });
  expect([...(await q.depth()).keys()]).toEqual(['us1']);
  expect(clock.pending).toBe(0); // each read's timeout timer went with it
  r.failOn();
  r.hangOn('us1');
  r.depth.de1 = { waiting: 7, delivered: 0 };
  await clock.advance(100);
  let d: ReadonlyMap<string, QueueReading> | null = null;
  void q.depth().then((x) => (d = x));
  await clock.advance(49);
  expect(d).toBeNull(); // waiting for the hung read
  await clock.advance(1);
  expect(d!.get('us1')).toEqual({ waiting: 3, delivered: 1 }); // the last known
  expect(d!.get('de1')).toEqual({ waiting: 7, delivered: 0 });
});
