/** src/cli/main.ts watchedParent: whose end the CLI outlives no longer (the launcher's, npm's), never a shell's. */
import { describe, expect, test } from 'bun:test';
import { watchedParent } from '../../src/cli/main';

describe('watchedParent', () => {
  test('the launcher named by PROXYCHECK_LAUNCHER_PID, else the parent when npm ran it, else none', () => {
    expect(watchedParent({ PROXYCHECK_LAUNCHER_PID: '4242' }, 4242)).toBe(4242);
    expect(watchedParent({ PROXYCHECK_LAUNCHER_PID: '4242', npm_command: 'exec' }, 99)).toBe(4242);
    expect(watchedParent({ npm_command: 'run-script' }, 777)).toBe(777);
    // by hand (a shell, nohup): nothing watched
    expect(watchedParent({}, 777)).toBeNull();
    expect(watchedParent({ npm_command: '' }, 777)).toBeNull();
    // already orphaned, or nonsense: nothing watched
    expect(watchedParent({ npm_command: 'exec' }, 1)).toBeNull();
    expect(watchedParent({ PROXYCHECK_LAUNCHER_PID: 'x' }, 777)).toBeNull();
    expect(watchedParent({ PROXYCHECK_LAUNCHER_PID: '1' }, 777)).toBeNull();
  });
});
