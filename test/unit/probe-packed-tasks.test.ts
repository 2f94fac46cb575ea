import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { packTasks, unpackTasks } from '../../src/probe/workers/packed-tasks';
import { isServiceError } from '../../src/errors';
import type { ProbeTask } from '../../src/probe/types';
import { DOMAIN_ERROR_CODES } from '../../src/error-codes';

const host = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.domain(),
  fc.string({ maxLength: 20 }).filter((s) => !s.includes('\n')),
);
const task = fc.record({
  index: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  host,
  port: fc.integer({ min: 1, max: 65535 }),
  auth: fc.option(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }))),
});
const toTask = (t: { index: number; host: string; port: number; auth: [string, string] | null }): ProbeTask => ({
  index: t.index,
  proxy: t.auth === null ? { host: t.host, port: t.port } : { host: t.host, port: t.port, username: t.auth[0], password: t.auth[1] },
});

describe('packTasks / unpackTasks', () => {
  test('round trip, with and without auth, empty hosts included', () => {
    fc.assert(
      fc.property(fc.array(task, { maxLength: 70 }), (ts) => {
        const tasks = ts.map(toTask);
        expect(unpackTasks(structuredClone(packTasks(tasks)))).toEqual(tasks);
      }),
      { numRuns: 500 },
    );
  });

  test('no auth array when no task has auth; an empty list packs to nothing', () => {
    expect(packTasks([{ index: 3, proxy: { host: '127.0.0.1', port: 8080 } }]).auth).toBeNull();
    expect(unpackTasks(packTasks([]))).toEqual([]);
  });

  test('a username without a password comes back with an empty password', () => {
    const back = unpackTasks(packTasks([{ index: 0, proxy: { host: 'a.example', port: 1, username: 'u' } }]));
    expect(back[0]!.proxy).toEqual({ host: 'a.example', port: 1, username: 'u', password: '' });
  });

  test('a host with a line break is refused with a code (a ServiceError)', () => {
    expect(() => packTasks([{ index: 0, proxy: { host: 'a\nb', port: 1 } }])).toThrow(expect.objectContaining({ code: 'pack_bad_host' }));
    let thrown: unknown = null;
    try {
      packTasks([{ index: 3, proxy: { host: 'a\nb', port: 1 } }]);
    } catch (e) {
      thrown = e;
    }
    expect(isServiceError(thrown, DOMAIN_ERROR_CODES.PACK_BAD_HOST)).toBe(true);
    expect((thrown as Error).message).toBe('host of task 3 contains a line break');
  });
});
