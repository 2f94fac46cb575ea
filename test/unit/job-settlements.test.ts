/** src/jobs/settlements.ts: failed settlements tried again until they succeed; bounded; a last try at stop. */
import { describe, expect, test } from 'bun:test';
import { SettlementRetry } from '../../src/jobs/settlements';
import { memoryLogger } from '../../src/log';
import { FakeClock } from '../helpers/fake-clock';

describe('SettlementRetry', () => {
  test('a failing settlement is tried again until it succeeds, then forgotten', async () => {
    const log = memoryLogger('debug');
    const r = new SettlementRetry({ log, intervalMs: 60_000 });
    let calls = 0;
    r.add('run_a', async () => {
      calls++;
      if (calls < 3) throw new Error('db down');
    });
    expect(r.waiting).toBe(1);
    await r.retryNow(); // fails
    await r.retryNow(); // fails again
    expect(r.waiting).toBe(1);
    await r.retryNow(); // succeeds
    expect(r.waiting).toBe(0);
    expect(calls).toBe(3);
    expect(log.lines.some((l) => l.msg === 'settlement repaired')).toBe(true);
    await r.stop();
  });

  test('the timer tries on its own, every intervalMs, until stop', async () => {
    const clock = new FakeClock();
    const r = new SettlementRetry({ log: memoryLogger('debug'), intervalMs: 10, clock });
    let tries = 0;
    r.add('run_b', async () => {
      tries++;
      if (tries < 2) throw new Error('db down');
    });
    await clock.advance(9);
    expect(tries).toBe(0);
    await clock.advance(1);
    expect(tries).toBe(1);
    expect(r.waiting).toBe(1);
    await clock.advance(10);
    expect(tries).toBe(2);
    expect(r.waiting).toBe(0);
    await r.stop();
    expect(clock.pending).toBe(0);
  });

  test('stop makes one last try and is safe twice; nothing is taken after it', async () => {
    const r = new SettlementRetry({ log: memoryLogger('debug'), intervalMs: 60_000 });
    let n = 0;
    r.add('run_c', async () => {
      n++;
    });
    await r.stop();
    await r.stop();
    expect(n).toBe(1);
    r.add('run_d', async () => {
      n++;
    });
    expect(r.waiting).toBe(0);
  });

  test('bounded: past max the oldest is left to the orphan sweep', async () => {
    const log = memoryLogger('debug');
    const r = new SettlementRetry({ log, intervalMs: 60_000, max: 2 });
    for (const id of ['r1', 'r2', 'r3']) r.add(id, async () => {});
    expect(r.waiting).toBe(2);
    expect(log.lines.some((l) => l.msg === 'settlement retry queue full; left for the orphan sweep once this node is gone' && l.label === 'r1')).toBe(true);
    await r.stop();
  });
});
