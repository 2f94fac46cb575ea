/**
 * bench/e2e/proc.ts: the process-tree CPU the users bench charges the
 * service with (treeCpuMs = the process, all threads, and its live
 * descendants). A busy child must show up in the parent's tree and not in
 * the parent's own figure.
 */
import { afterAll, expect, test } from 'bun:test';
import { cpuMs, descendants, treeCpuMs } from '../../bench/e2e/proc';

// busy until killed: how soon it has used its CPU depends on the machine's load, so the test waits for the CPU, not for a time
const child = Bun.spawn([process.execPath, '-e', 'for (;;) {}'], { stdout: 'ignore', stderr: 'ignore' });
afterAll(() => child.kill());

test('a busy child is in the tree: listed as a descendant, its CPU counted by treeCpuMs only', async () => {
  // bounded only by the test's own timeout: on a loaded machine it takes longer, it does not fail
  while (cpuMs(child.pid).total < 100) await Bun.sleep(20);
  expect(descendants(process.pid)).toContain(child.pid);
  const own = cpuMs(process.pid).total;
  const kid = cpuMs(child.pid).total;
  const tree = treeCpuMs(process.pid);
  expect(kid).toBeGreaterThanOrEqual(100);
  expect(tree).toBeGreaterThanOrEqual(own + kid); // read after both: the tree only grows
  expect(own).toBeLessThan(tree - 90); // the child's CPU is not in the parent's own figure
});
