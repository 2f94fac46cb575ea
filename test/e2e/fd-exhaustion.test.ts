/**
 * End to end: a service that runs out of file descriptors (started under
 * `prlimit --nofile`, with MAX_IN_FLIGHT set far above what the limit holds)
 * never blames the proxies for it. Bun reports a socket it could not create as
 * ECONNREFUSED; without the check in src/probe/net/fd-check.ts those probes
 * came back `connect_refused`, a false verdict, and were charged. Now every
 * black hole ends `timeout` / `connect_timeout` (tried again once descriptors
 * free up, src/jobs/retries.ts) or `checker_overloaded`, and only the probes
 * actually performed are charged.
 *
 * The judge is a separate one (JUDGE_URL): with the built-in judge the
 * descriptor guard (src/fd-guard.ts) keeps the probes from running out at all
 * (test/e2e/fd-budget.test.ts); an external judge and a MAX_IN_FLIGHT above
 * what the limit holds is how a process still runs out.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';

const BALANCE = 10_000;
const N = 600;
let hole: FakeServer;
let judge: JudgeServer;
const JUDGE_KEY = 'fd-exhaustion-judge-key';
let store: ServiceStore;
let p: ServiceProcess | null = null;

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  judge = await startJudgeServer({ key: JUDGE_KEY });
  store = await serviceStore();
});
afterAll(async () => {
  if (p !== null) {
    p.kill('SIGKILL');
    await p.exited;
  }
  await store?.cleanup();
  await hole?.close();
  await judge?.close();
});

test('out of descriptors: no probe is blamed on the proxy, only performed probes are charged', async () => {
  p = await spawnService(store, {
    wrapper: ['prlimit', '--nofile=400:400'],
    env: { BOOTSTRAP_CHECKS: String(BALANCE), JUDGE_URL: judge.url, JUDGE_KEY, MAX_IN_FLIGHT: '5000', SLOTS_PER_ENDPOINT: '256', MAX_JOB_SHARE_PERCENT: '100' },
  });
  const proxies = Array.from({ length: N }, (_, i) => `127.3.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);
  const r = await call(`${p.url}/check`, { method: 'POST', headers: { 'x-api-key': p.key }, json: { proxies, timeout: 1500 } });
  expect(r.status).toBe(200);
  const file = await call(r.body.result_url);
  const codes: Record<string, number> = {};
  for (const rec of file.body.proxies as { error: { code: string } | null }[]) {
    const c = rec.error?.code ?? 'none';
    codes[c] = (codes[c] ?? 0) + 1;
  }
  console.log(`fd exhaustion: ${N} black holes under nofile=400 -> ${JSON.stringify(codes)}`);
  expect(Object.keys(codes).every((c) => c === 'timeout' || c === 'connect_timeout' || c === 'checker_overloaded')).toBe(true);
  expect(codes.connect_refused ?? 0).toBe(0);
  expect(codes.connect_failed ?? 0).toBe(0);
  // the limit was really hit: some probes had to wait for descriptors (tried again) or never ran
  expect(p.logs.some((l) => l.msg === 'the checker ran out of local resources (open-file limit, MAX_IN_FLIGHT); probes are tried again')).toBe(true);
  const me = (await call(`${p.url}/me`, { headers: { 'x-api-key': p.key } })).body;
  expect(me.user.checks).toBe(BALANCE - (N - (codes.checker_overloaded ?? 0)));
}, 60_000);
