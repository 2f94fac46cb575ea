/**
 * bench/e2e/proc.ts: the process-tree CPU the users bench charges the
 * service with (treeCpuMs = the process, all threads, and its live
 * descendants). A busy child must show up in the parent's tree and not in
 * the parent's own figure.
 */
import { afterAll, expect, test } from 'bun:test';
import { cpuMs, descendants, treeCpuMs } from '../../bench/e2e/proc';

const child = Bun.spawn([process.execPath, '-e', 'const t = Date.now(); while (Date.now() - t < 400) {} setTimeout(() => {}, 5000);'], { stdout: 'ignore', stderr: 'ignore' });
afterAll(() => child.kill());

test('a busy child is in the tree: listed as a descendant, its CPU counted by treeCpuMs only', async () => {
  await Bun.sleep(600);
  expect(descendants(process.pid)).toContain(child.pid);
  const own = cpuMs(process.pid).total;
  const tree = treeCpuMs(process.pid);
  const kid = cpuMs(child.pid).total;
  expect(kid).toBeGreaterThanOrEqual(100); // ~400 ms busy, less on a loaded machine
  expect(tree).toBeGreaterThanOrEqual(own + kid - 20); // 10 ms clock ticks, read a moment apart
});
