/**
 * The probe's single time budget: exact (a black-hole probe ends within a few
 * ms after timeoutMs) and leak-free (10 000 probes against a black hole leave
 * no socket behind), plus the SSRF guard opening no socket at all.
 *
 * The black hole runs in a child process, so /proc/self/fd counts our sockets
 * only. (The check used to ask an in-process hole how many connections it
 * held: it accepts connections from its queue after our probes gave up on
 * them, CI saw it hold 14-53 at the check and once 15 for 10 s, and whether
 * those were ours could not be told from its count.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import type { ProbeResult, ProtocolSettings } from '../../src/probe/types';
import { runProbe } from '../../src/probe/probe';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import { startBlackHoleProcess, type BlackHoleProcess } from '../fixtures/fake-servers';

let hole: BlackHoleProcess;
const settings: ProtocolSettings = {
  type: 'http',
  timeoutMs: 1000,
  judge: parseJudgeUrl('http://127.0.0.1:9/judge'),
  checkerIps: ['127.0.0.1'],
  baselineHeaders: [],
  allowPrivateTargets: true,
};
const fds = (): number => readdirSync('/proc/self/fd').length;

beforeAll(async () => {
  hole = await startBlackHoleProcess();
});
afterAll(async () => {
  await hole.close();
});

/** Waits (up to 5 s) until this process's open descriptors are back to `target` (a destroyed socket's fd closes in the next turns). */
async function fdsBackTo(target: number): Promise<number> {
  for (let i = 0; i < 500 && fds() > target; i++) await new Promise((r) => setTimeout(r, 10));
  return fds();
}

test('a black-hole probe with timeoutMs 1000 resolves between 1000 and 1050 ms (plus how late the loop itself runs)', async () => {
  for (const type of ['http', 'socks5'] as const) {
    const t0 = performance.now();
    // how late a plain 1000 ms timer fires meanwhile: when the CPU is taken by
    // others, our whole loop runs late, and the probe may be as late as that
    const lag = new Promise<number>((ok) => setTimeout(() => ok(Math.max(0, performance.now() - t0 - 1000)), 1000));
    const r = await runProbe({ index: 3, proxy: { host: hole.host, port: hole.port } }, { ...settings, type });
    const took = performance.now() - t0;
    const late = await lag;
    expect(r.error?.code).toBe('timeout');
    expect(r.status).toBe('failed');
    expect(r.index).toBe(3);
    expect(took).toBeGreaterThanOrEqual(999);
    expect(took).toBeLessThan(1050 + late);
    expect(r.responseTimeMs).toBeGreaterThanOrEqual(995);
    expect(r.responseTimeMs).toBeLessThan(1050 + late);
  }
});

/**
 * What a black hole can legitimately make a probe end with. It never sends a
 * byte, so never `working` and never a code that needs an answer
 * (bad_response, http_status, auth_required, judge_mismatch). Nearly all
 * probes end `timeout` (accepted, or completed by a SYN cookie, and never
 * answered) or `connect_timeout` (SYN dropped: accept queue full). But 5000
 * connects at once overflow the hole's SYN and accept queues (the kernel logs
 * "Possible SYN flooding ... Sending cookies"; nstat shows ListenOverflows and
 * EmbryonicRsts), and a connection the kernel gives up on is reset: our side
 * then sees the reset while connecting (connect_refused, connect_failed with
 * ECONNRESET) or after it connected (connection_closed). Local resource
 * errors under the suite's load (EADDRNOTAVAIL, EMFILE) are connect_failed.
 * CI once saw ONE such probe in 10 000 in both full runs of `.ci/run`; it
 * did not come back in 20 runs of this file under 2 CPU burners nor with two
 * copies at once, so which of these it was is not known: all of them are
 * the hole's load, not a leak or a wrong verdict, which is what this test is
 * about. A systematic change still fails it: at most 1% may be anything but
 * a timeout.
 */
const BLACK_HOLE_CODES = ['timeout', 'connect_timeout', 'connect_refused', 'connect_failed', 'connection_closed'];

test('10 000 probes against a black hole leave no socket open', async () => {
  const before = fds();
  const codes = new Map<string, number>();
  const odd: ProbeResult[] = []; // results other than a timeout (the first 20), printed in full when the test fails
  let resolved = 0;
  let working = 0;
  // 2 fds per probe on loopback (client + accepted): two waves of 5000 stay under a 20000 fd limit
  for (let wave = 0; wave < 2; wave++) {
    const all: Promise<void>[] = [];
    for (let i = 0; i < 5000; i++) {
      all.push(
        runProbe({ index: i, proxy: { host: hole.host, port: hole.port } }, settings).then((r) => {
          resolved++;
          if (r.status !== 'failed' || r.statusCode !== null) working++;
          const c = r.error?.code ?? 'none';
          codes.set(c, (codes.get(c) ?? 0) + 1);
          if (c !== 'timeout' && c !== 'connect_timeout' && odd.length < 20) odd.push(r);
        }),
      );
    }
    await Promise.all(all);
  }
  const seen = { codes: Object.fromEntries(codes), odd };
  if (odd.length > 0 || process.env.PROBE_TIMEOUT_LOG) console.error('black-hole probe codes:', JSON.stringify(seen, null, 1));
  expect(resolved).toBe(10_000);
  expect(working).toBe(0);
  expect([...codes.keys()].filter((c) => !BLACK_HOLE_CODES.includes(c))).toEqual([]);
  // accepted ones time out after connecting; those beyond the listen queue never connect
  expect((codes.get('timeout') ?? 0) + (codes.get('connect_timeout') ?? 0)).toBeGreaterThanOrEqual(9_900);
  expect(await fdsBackTo(before)).toBeLessThanOrEqual(before);
  // they did reach the hole (connections it accepted), and none of ours is left
  expect((await hole.counts()).accepted).toBeGreaterThan(0);
}, 15_000);

test('with private targets refused, a loopback proxy is blocked_target and no socket is opened', async () => {
  // The 10 000-probe test before may leave connections in the black hole's
  // accept queue that it accepts only now: wait until its count is still.
  let { accepted } = await hole.counts();
  for (let i = 0; i < 100; i++) {
    await new Promise((ok) => setTimeout(ok, 30));
    const now = (await hole.counts()).accepted;
    if (now === accepted) break;
    accepted = now;
  }
  const before = fds();
  const r = await runProbe({ index: 1, proxy: { host: '127.0.0.1', port: hole.port } }, { ...settings, allowPrivateTargets: false });
  expect(r).toMatchObject({ status: 'failed', statusCode: null, error: { code: 'blocked_target' } });
  expect(fds()).toBe(before);
  await new Promise((ok) => setTimeout(ok, 20));
  expect((await hole.counts()).accepted).toBe(accepted);
});

test('an impossible port fails as connect_failed instead of throwing', async () => {
  const r = await runProbe({ index: 2, proxy: { host: '127.0.0.1', port: 70000 } }, settings);
  expect(r).toMatchObject({ index: 2, status: 'failed', error: { code: 'connect_failed' } });
});

test('an answer that arrives after the budget is a timeout, even when the timer fires late', async () => {
  // The proxy (in a child process, so our blocked loop does not delay it)
  // answers at ~950 ms; our event loop is blocked from 600 to 1150 ms, so when
  // it wakes the deadline is overdue AND the answer is buffered. Whichever runs
  // first, the verdict must be `timeout`: the answer came after the budget.
  const child = Bun.spawn([process.execPath, `${import.meta.dir}/../fixtures/delayed-proxy-child.ts`], {
    env: { ...process.env, DELAY_MS: '950' },
    stdout: 'pipe',
  });
  try {
    const reader = child.stdout.getReader();
    const first = await reader.read();
    reader.releaseLock();
    const { proxyPort, judgeUrl } = JSON.parse(new TextDecoder().decode(first.value)) as { proxyPort: number; judgeUrl: string };
    const s = { ...settings, judge: parseJudgeUrl(judgeUrl), checkerIps: [], timeoutMs: 1000 };
    // The round tests the case only when our loop is blocked before the answer
    // is read: under CPU load the timer that starts the block can fire late,
    // after the answer (inside the budget, rightly `working`). Such a round
    // is not counted; 3 rounds must test the case, within 8 tries.
    let tested = 0;
    for (let round = 0; round < 8 && tested < 3; round++) {
      const t0 = performance.now();
      let settled = false;
      const probe = runProbe({ index: round, proxy: { host: '127.0.0.1', port: proxyPort } }, s).then((r) => {
        settled = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 600 - (performance.now() - t0)));
      const settledBeforeBlock = settled;
      const until = t0 + 1150;
      while (performance.now() < until) {
        // block the loop past the deadline
      }
      const r = await probe;
      if (settledBeforeBlock) {
        expect(r.responseTimeMs).toBeLessThanOrEqual(1000); // it was read inside the budget
        continue;
      }
      tested++;
      expect(r.status).toBe('failed');
      expect(r.error?.code).toBe('timeout');
    }
    expect(tested).toBe(3);
  } finally {
    child.kill();
    await child.exited;
  }
}, 20_000);
