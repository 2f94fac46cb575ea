import { afterEach, expect, test } from 'bun:test';
import { openSync, closeSync } from 'node:fs';
import { DescriptorGuard, openDescriptors } from '../../src/fd-guard';
import { spareFds } from '../../src/limits';
import { FakeClock } from '../helpers/fake-clock';

let guard: DescriptorGuard | null = null;
afterEach(() => guard?.stop());

test('the cap follows the descriptors that are not probes, with a 1 s window before it springs back', () => {
  let open = 300;
  let probes = 100;
  const set: number[] = [];
  const budgets: number[] = [];
  // timers that never fire in this test: every sample is the test's
  guard = new DescriptorGuard({ openFiles: 2000, cap: 1500, readOpen: () => open, intervalMs: 1e9, idleIntervalMs: 1e9 });
  guard.sample(); // no target yet: nothing read, nothing set
  expect(budgets).toEqual([]);
  guard.start({ probesInFlight: () => probes, setCapacity: (n) => set.push(n), setStartBudget: (n) => budgets.push(n) }); // the first sample: others 200: 2000 - 40 - 200 = 1760 > 1500
  expect(set).toEqual([]);
  expect(guard.capacity).toBe(1500);
  open = 1100; // the judge holds 800 more connections: others 1000
  guard.sample();
  expect(set).toEqual([2000 - spareFds(2000) - 1000]);
  expect(budgets).toEqual([(2000 - 40 - 300) / 2, (2000 - 40 - 1100) / 2]); // half of what is free above the spare, every sample
  open = 300; // they closed: the window still remembers 1000
  for (let i = 0; i < 39; i++) guard.sample();
  expect(guard.capacity).toBe(960);
  guard.sample(); // the 1000 left the window (40 samples)
  expect(guard.capacity).toBe(1500);
  expect(set).toEqual([960, 1500]);
  probes = 1000; // probes are not others
  open = 1200;
  guard.sample();
  expect(guard.capacity).toBe(1500);
});

test('no count from the kernel: the guard stops and leaves the cap alone', () => {
  const set: number[] = [];
  guard = new DescriptorGuard({ openFiles: 2000, cap: 1500, readOpen: () => null }).start({ probesInFlight: () => 0, setCapacity: (n) => set.push(n), setStartBudget: (n) => set.push(n) });
  expect(guard.running).toBe(false);
  expect(set).toEqual([]);
});

test('openDescriptors counts this process\'s descriptors (Linux >= 6.2)', () => {
  const before = openDescriptors();
  if (before === null) return; // an older kernel: nothing to count with (the guard is off there)
  const fds = Array.from({ length: 50 }, () => openSync('/dev/null', 'r'));
  try {
    expect(openDescriptors()! - before).toBe(50);
  } finally {
    for (const f of fds) closeSync(f);
  }
});

test('start samples at once and then every intervalMs until stop', async () => {
  let reads = 0;
  const clock = new FakeClock();
  guard = new DescriptorGuard({ openFiles: 2000, cap: 1500, readOpen: () => (reads++, 100), intervalMs: 10, clock }).start({ probesInFlight: () => 5, setCapacity: () => {}, setStartBudget: () => {} });
  expect(reads).toBe(1);
  await clock.advance(9);
  expect(reads).toBe(1);
  await clock.advance(51);
  expect(reads).toBe(7); // at 10, 20, ..., 60 ms
  guard.stop();
  expect(clock.pending).toBe(0);
  await clock.advance(30);
  expect(reads).toBe(7);
});

test('no probe in flight: the idle cadence; wake() brings the busy one back at once', async () => {
  let reads = 0;
  let probes = 0;
  const clock = new FakeClock();
  guard = new DescriptorGuard({
    openFiles: 2000,
    cap: 1500,
    readOpen: () => (reads++, 100),
    intervalMs: 10,
    idleIntervalMs: 10_000,
    clock,
  });
  guard.wake(); // before start (the scheduler's onBusy may fire first): nothing
  expect(reads).toBe(0);
  guard.start({ probesInFlight: () => probes, setCapacity: () => {}, setStartBudget: () => {} });
  expect(reads).toBe(1);
  expect(guard.idling).toBe(true);
  await clock.advance(9_999);
  expect(reads).toBe(1); // idle: the next sample is 10 s away
  guard.wake();
  guard.wake(); // twice is once
  probes = 3;
  expect(guard.idling).toBe(false);
  expect(clock.pending).toBe(1);
  await clock.advance(80);
  expect(reads).toBe(9); // every 10 ms while probes are in flight
  probes = 0;
  await clock.advance(10); // the next sample sees none in flight: idle again
  expect(reads).toBe(10);
  expect(guard.idling).toBe(true);
  await clock.advance(9_999);
  expect(reads).toBe(10);
  await clock.advance(1);
  expect(reads).toBe(11); // the idle cadence
  guard.stop();
  guard.wake(); // stopped: stays stopped
  expect(clock.pending).toBe(0);
  await clock.advance(20_000);
  expect(reads).toBe(11);
});

test('the start budget counts probes granted that have not opened their socket yet (baseline + probes in flight)', () => {
  let open = 100;
  let probes = 0;
  const budgets: number[] = [];
  guard = new DescriptorGuard({ openFiles: 1200, cap: 5000, readOpen: () => open, intervalMs: 1e9, idleIntervalMs: 1e9 });
  guard.start({ probesInFlight: () => probes, setCapacity: () => {}, setStartBudget: (n) => budgets.push(n) }); // idle: baseline 100
  const free = 1200 - spareFds(1200);
  expect(budgets).toEqual([(free - 100) / 2]);
  probes = 534; // granted, no socket opened yet: open has not moved
  guard.sample();
  expect(budgets[1]).toBe(Math.floor((free - 100 - 534) / 2)); // not (free - 100) / 2 again
  open = 900; // their sockets (and some judge connections) are open now: open is the larger
  guard.sample();
  expect(budgets[2]).toBe(Math.floor((free - 900) / 2));
  probes = 0; // all ended; a new baseline is read while idle
  open = 120;
  guard.sample();
  expect(budgets[3]).toBe(Math.floor((free - 120) / 2));
});
