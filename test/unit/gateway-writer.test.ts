/** The relay's writer (src/gateway/writer.ts): what the socket does not take is kept, its source paused until it drains; FIN after the rest. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { Writer, type Sock } from '../../src/gateway/writer';

/** A socket that takes at most `room` bytes per write (`room` changes between calls). */
class FakeSock implements Sock {
  room = Infinity;
  written: Buffer[] = [];
  paused = false;
  fin = 0;
  write(data: Uint8Array): number {
    const n = Math.min(this.room, data.length);
    this.written.push(Buffer.from(data.subarray(0, n)));
    this.room -= n;
    return n;
  }
  shutdown(): void {
    this.fin++;
  }
  end(): void {}
  terminate(): void {}
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  get text(): string {
    return Buffer.concat(this.written).toString('latin1');
  }
}

describe('Writer', () => {
  test('a socket that takes everything: nothing kept, nobody paused', () => {
    const to = new FakeSock();
    const from = new FakeSock();
    const w = new Writer(to);
    w.write(Buffer.from('abc'), from);
    w.write('déf', from);
    expect(to.text).toBe('abcd\xe9f');
    expect([w.buffered, from.paused]).toEqual([0, false]);
  });

  test('a full socket: the rest is kept, the source paused; drain writes it and resumes the source; FIN waits for it', () => {
    const to = new FakeSock();
    const from = new FakeSock();
    let finished = 0;
    const w = new Writer(to, () => finished++);
    to.room = 2;
    w.write(Buffer.from('hello'), from);
    expect([w.buffered, from.paused]).toEqual([3, true]);
    w.write(Buffer.from('!'), from);
    w.end();
    expect([w.buffered, to.fin, w.finished, finished]).toEqual([4, 0, false, 0]);
    to.room = 1;
    w.drain();
    expect([w.buffered, from.paused]).toEqual([3, true]);
    to.room = Infinity;
    w.drain();
    expect(to.text).toBe('hello!');
    expect([w.buffered, from.paused, to.fin, w.finished, finished]).toEqual([0, false, 1, true, 1]);
    w.write(Buffer.from('late'));
    expect(to.text).toBe('hello!');
  });

  test('a closed socket (-1): kept, never lost silently; kill() drops it and lets the source read', () => {
    const to = new FakeSock();
    const from = new FakeSock();
    const w = new Writer(to);
    to.write = () => -1;
    w.write(Buffer.from('xyz'), from);
    expect([w.buffered, from.paused]).toEqual([3, true]);
    w.kill();
    expect([w.buffered, from.paused]).toEqual([0, false]);
    w.drain();
    w.end();
    expect(to.fin).toBe(0);
  });

  test('any sequence of writes and partial drains delivers every byte in order, holding no more than the last refusals', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uint8Array({ maxLength: 50 }), fc.nat(60)), { maxLength: 30 }), (steps) => {
        const to = new FakeSock();
        const from = new FakeSock();
        const w = new Writer(to);
        const sent: Buffer[] = [];
        for (const [bytes, room] of steps) {
          to.room = room;
          w.drain();
          w.write(Buffer.from(bytes), from);
          sent.push(Buffer.from(bytes));
          expect(from.paused).toBe(w.buffered > 0);
        }
        to.room = Infinity;
        w.drain();
        expect(Buffer.concat(to.written)).toEqual(Buffer.concat(sent));
        expect(from.paused).toBe(false);
      }),
    );
  });
});
