import { describe, expect, test } from 'bun:test';
import { memoryLogger } from '../../src/log';
import { stopSteps } from '../../src/stop-steps';
import { settle } from '../helpers/fake-clock';

describe('stopSteps: the undo list of a composition root', () => {
  test('runs the steps in reverse, goes on past a failing one (logged), and a second unwind does nothing', async () => {
    const log = memoryLogger('debug');
    const { undo, unwind } = stopSteps(log, 'stop step failed');
    const ran: string[] = [];
    undo.push(() => void ran.push('database'));
    undo.push(() => {
      ran.push('pool');
      throw new Error('stuck');
    });
    undo.push(async () => {
      await settle(1);
      ran.push('server');
    });
    await unwind();
    expect(ran).toEqual(['server', 'pool', 'database']);
    expect(log.lines.filter((l) => l.msg === 'stop step failed')).toHaveLength(1);
    await unwind();
    expect(ran).toHaveLength(3);
    expect(undo).toHaveLength(0);
  });
});
