/**
 * Tests for src/jobs/mailbox.ts: arrival order with async handlers of random
 * latency, one handler at a time (also for re-entrant posts from a handler),
 * the first error stops the mailbox and fires onError once, and idle().
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { Mailbox } from '../../src/jobs/mailbox';
import { settle } from '../helpers/fake-clock';

/** Waits `n` turns of the microtask queue (or a turn of the event loop when n < 0). */
async function delay(n: number): Promise<void> {
  if (n < 0) {
    await settle(1);
    return;
  }
  for (let i = 0; i < n; i++) await Promise.resolve();
}

function recorder() {
  const errors: unknown[] = [];
  return { errors, onError: (e: unknown) => void errors.push(e) };
}

describe('order and exclusion', () => {
  test('async handlers of random latency: arrival order, never two at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -1, max: 5 }), { minLength: 1, maxLength: 40 }), async (delays) => {
        const seen: number[] = [];
        let active = 0;
        let maxActive = 0;
        const { errors, onError } = recorder();
        const mb = new Mailbox<number>(async (i) => {
          active++;
          maxActive = Math.max(maxActive, active);
          await delay(delays[i] ?? 0);
          seen.push(i);
          active--;
        }, onError);
        delays.forEach((_, i) => mb.post(i));
        await mb.idle();
        expect(seen).toEqual(delays.map((_, i) => i));
        expect(maxActive).toBe(1);
        expect(errors).toEqual([]);
        expect(mb.failed).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  test('posts arriving while a handler awaits queue behind it, interleaved with outside posts', async () => {
    const log: string[] = [];
    const { onError } = recorder();
    const mb = new Mailbox<string>(async (m) => {
      log.push(`start ${m}`);
      await delay(-1);
      if (m === 'a') mb.post('a-child');
      log.push(`end ${m}`);
    }, onError);
    mb.post('a');
    mb.post('b');
    await delay(1);
    mb.post('c');
    await mb.idle();
    // 'c' was posted while 'a' awaited, 'a-child' at the end of 'a': arrival order is b, c, a-child
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c', 'start a-child', 'end a-child']);
  });

  test('synchronous handlers: a post from inside a handler runs after it, not nested', async () => {
    const log: string[] = [];
    const { errors, onError } = recorder();
    const mb = new Mailbox<number>((n) => {
      log.push(`start ${n}`);
      if (n < 3) mb.post(n + 1);
      log.push(`end ${n}`);
    }, onError);
    mb.post(0);
    await mb.idle();
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(errors).toEqual([]);
  });

  test('a mix of sync and async handlers keeps order', async () => {
    const seen: number[] = [];
    const { onError } = recorder();
    const mb = new Mailbox<number>((n) => {
      if (n % 2 === 0) {
        seen.push(n);
        return;
      }
      return delay(2).then(() => void seen.push(n));
    }, onError);
    for (let i = 0; i < 20; i++) mb.post(i);
    await mb.idle();
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  test('thousands of queued messages (past the internal compaction point) stay in order', async () => {
    const seen: number[] = [];
    const { onError } = recorder();
    const mb = new Mailbox<number>(async (n) => {
      if (n % 500 === 0) await delay(-1);
      seen.push(n);
      // keep posting while draining so compaction happens with a live tail
      if (n < 1500) mb.post(n + 5000);
    }, onError);
    for (let i = 0; i < 5000; i++) mb.post(i);
    await mb.idle();
    const expected = [...Array.from({ length: 5000 }, (_, i) => i), ...Array.from({ length: 1500 }, (_, i) => i + 5000)];
    expect(seen).toEqual(expected);
  });

  test('the mailbox can be reused after it has drained', async () => {
    const seen: string[] = [];
    const { onError } = recorder();
    const mb = new Mailbox<string>(async (m) => {
      await delay(1);
      seen.push(m);
    }, onError);
    mb.post('x');
    await mb.idle();
    mb.post('y');
    await mb.idle();
    expect(seen).toEqual(['x', 'y']);
  });
});

describe('errors', () => {
  test('a rejected handler stops the mailbox: later messages dropped, onError once, failed set', async () => {
    const seen: number[] = [];
    const { errors, onError } = recorder();
    const boom = new Error('boom');
    const mb = new Mailbox<number>(async (n) => {
      await delay(1);
      if (n === 2) throw boom;
      seen.push(n);
    }, onError);
    for (let i = 0; i < 6; i++) mb.post(i);
    await mb.idle();
    expect(seen).toEqual([0, 1]);
    expect(errors).toEqual([boom]);
    expect(mb.failed).toBe(boom);
    mb.post(99);
    mb.post(100);
    await mb.idle();
    await delay(-1);
    expect(seen).toEqual([0, 1]);
    expect(errors).toHaveLength(1);
  });

  test('a synchronous throw stops it the same way', async () => {
    const seen: number[] = [];
    const { errors, onError } = recorder();
    const err = new TypeError('bad state');
    const mb = new Mailbox<number>((n) => {
      if (n === 1) throw err;
      seen.push(n);
    }, onError);
    mb.post(0);
    mb.post(1);
    mb.post(2);
    await mb.idle();
    expect(seen).toEqual([0]);
    expect(errors).toEqual([err]);
    expect(mb.failed).toBe(err);
  });

  test('messages posted after the failure but before it was noticed are dropped too', async () => {
    const seen: number[] = [];
    const { errors, onError } = recorder();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const mb = new Mailbox<number>(async (n) => {
      if (n === 0) {
        await gate;
        throw new Error('late failure');
      }
      seen.push(n);
    }, onError);
    mb.post(0);
    mb.post(1);
    mb.post(2);
    release();
    await mb.idle();
    expect(seen).toEqual([]);
    expect(errors).toHaveLength(1);
    expect((mb.failed as Error).message).toBe('late failure');
  });

  test('a falsy thrown value still marks the mailbox failed', async () => {
    const { errors, onError } = recorder();
    const seen: number[] = [];
    const mb = new Mailbox<number>((n) => {
      if (n === 0) throw undefined;
      seen.push(n);
    }, onError);
    mb.post(0);
    mb.post(1);
    await mb.idle();
    mb.post(2);
    await mb.idle();
    expect(mb.failed).toBeInstanceOf(Error);
    expect(errors).toHaveLength(1);
    expect(seen).toEqual([]);
  });
});

describe('idle()', () => {
  test('resolves at once when nothing was ever posted', async () => {
    const { onError } = recorder();
    const mb = new Mailbox<number>(() => {}, onError);
    let done = false;
    void mb.idle().then(() => (done = true));
    await delay(2);
    expect(done).toBe(true);
  });

  test('waits for messages posted before and while waiting; every waiter resolves', async () => {
    const { onError } = recorder();
    const seen: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const mb = new Mailbox<number>(async (n) => {
      if (n === 0) await gate;
      seen.push(n);
    }, onError);
    mb.post(0);
    const resolved: string[] = [];
    const w1 = mb.idle().then(() => void resolved.push(`w1 after ${seen.length}`));
    mb.post(1);
    const w2 = mb.idle().then(() => void resolved.push(`w2 after ${seen.length}`));
    await delay(-1);
    expect(resolved).toEqual([]);
    mb.post(2);
    release();
    await Promise.all([w1, w2]);
    expect(seen).toEqual([0, 1, 2]);
    expect(resolved).toEqual(['w1 after 3', 'w2 after 3']);
  });

  test('resolves when the mailbox fails', async () => {
    const { errors, onError } = recorder();
    const mb = new Mailbox<number>(async () => {
      await delay(-1);
      throw new Error('x');
    }, onError);
    mb.post(1);
    mb.post(2);
    await mb.idle();
    expect(errors).toHaveLength(1);
    // and stays resolvable afterwards
    await mb.idle();
    expect(mb.failed).toBeInstanceOf(Error);
  });
});

describe('Mailbox.postFirst', () => {
  test('is handled right after the running handler, ahead of waiting messages', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const box = new Mailbox<string>(async (m) => {
      seen.push(m);
      if (m === 'a') await gate;
    }, () => {});
    box.post('a');
    box.post('b');
    box.post('c');
    box.postFirst('urgent');
    release();
    await box.idle();
    expect(seen).toEqual(['a', 'urgent', 'b', 'c']);
  });

  test('on an idle mailbox it is handled at once; after a failure it is dropped', async () => {
    const seen: string[] = [];
    const box = new Mailbox<string>((m) => {
      seen.push(m);
      if (m === 'bad') throw new Error('x');
    }, () => {});
    box.postFirst('one');
    await box.idle();
    box.post('bad');
    await box.idle();
    box.postFirst('late');
    await box.idle();
    expect(seen).toEqual(['one', 'bad']);
  });
});
