/**
 * The `proxycheck` CLI's asynchronous checks, as a subprocess against a real
 * service on 127.0.0.1: `check --async` prints the job id, `status`, `wait`
 * (the summary as `check` prints it; exit 6 for a cancelled job) and
 * `cancel` (exit 5 once ended); a plain `check` of a list over the threshold
 * (ASYNC_THRESHOLD) submits asynchronously and follows the job, through a
 * proxy that cuts every connection after 2 s too (the WebSocket and the
 * polls are cut; the job and the CLI go on); Ctrl-C while following leaves
 * the job running and `wait` takes it up again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ASYNC_THRESHOLD } from '../../src/cli/check-command';
import { startCuttingProxy, type CuttingProxy } from '../fixtures/cutting-proxy';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { until } from '../helpers/process';
import { call, startTestService, type TestService } from '../helpers/service';

const REPO = resolve(import.meta.dir, '../..');
let t: TestService;
let dir: string;
let elite: FakeServer, hole: FakeServer;
let refused: number;
let cutter: CuttingProxy;

beforeAll(async () => {
  t = await startTestService({ BOOTSTRAP_CHECKS: '100000' });
  elite = await startHttpProxy();
  hole = await startBlackHoleAnyAddress();
  refused = await refusedPort();
  cutter = await startCuttingProxy(t.service.port, 2000);
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-async-'));
}, 60_000);

afterAll(async () => {
  await cutter?.close();
  await t?.stop();
  await elite?.close();
  await hole?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function spawnCli(args: string[], url = t.url) {
  return Bun.spawn([process.execPath, 'src/cli/main.ts', ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), PROXYCHECK_URL: url, PROXYCHECK_API_KEY: t.key },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
}

async function cli(args: string[], url?: string): Promise<Run> {
  const child = spawnCli(args, url);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

function listFile(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const working = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}:p@127.0.0.1:${elite.port}`);
const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.6.${1 + i}:${hole.port}`);
/** n distinct addresses that refuse at once (127.<b>.x.y, nothing listening on the port). */
const refusing = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${refused}`);
const job = async (jobId: string) => (await call(`${t.url}/checks/${jobId}`, { headers: { 'x-api-key': t.key } })).body;

describe('check --async, status, wait, cancel', () => {
  test('--async prints the job id and returns; status says running; wait prints the summary as check does', async () => {
    const list = listFile('async.txt', [...working(3, 'aw'), ...holes(2, 80)]);
    const r = await cli(['check', list, '--async', '--timeout', '2000', '--job-id', 'cli-async-1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('cli-async-1\n');
    expect(r.stderr).toContain('Submitted 5 entries as job cli-async-1');
    expect(r.stderr).toContain('proxycheck wait cli-async-1');

    const s = await cli(['status', 'cli-async-1']);
    expect(s.code).toBe(0);
    expect(s.stdout).toContain('Job cli-async-1: running');

    const w = await cli(['wait', 'cli-async-1']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toContain('Following job cli-async-1');
    expect(w.stdout).toContain('Checked 5 proxies');
    expect(w.stdout).toMatch(/Working: 3 \/ 5/);
    expect(w.stdout).toContain('Full result (links valid 12 hours, no key needed):');

    const done = await cli(['status', 'cli-async-1']);
    expect(done.stdout).toContain('Job cli-async-1: completed');
    expect(done.stdout).toMatch(/checked\s+5 \/ 5/);
    // one machine: its summary says where the probes came from, as check's does
    expect(done.stdout).toContain('Checked 5 proxies [http, us1 (probed from this machine), timeout 2000ms]');
    expect(w.stdout).toContain('Checked 5 proxies [http, us1 (probed from this machine), timeout 2000ms]');
    const json = await cli(['--json', 'status', 'cli-async-1']);
    expect(JSON.parse(json.stdout)).toMatchObject({ jobId: 'cli-async-1', status: 'completed', result: { summary: { total_working: 3 } } });
  }, 30_000);

  test('cancel: the checks not performed are refunded; cancel again is exit 5; wait of a cancelled job is exit 6', async () => {
    const list = listFile('cancel.txt', holes(20, 81));
    expect((await cli(['check', list, '--async', '--timeout', '15000', '--job-id', 'cli-cancel'])).code).toBe(0);
    const c = await cli(['cancel', 'cli-cancel']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toBe('Cancelled job cli-cancel; the checks not performed were refunded.\n');
    expect(await job('cli-cancel')).toMatchObject({ status: 'cancelled', error: 'client_cancelled' });
    const again = await cli(['cancel', 'cli-cancel']);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('Job not running');
    const w = await cli(['wait', 'cli-cancel']);
    expect(w.code).toBe(6);
    expect(w.stderr).toContain('Job cli-cancel ended cancelled (client_cancelled)');
    const unknown = await cli(['status', 'no-such-job']);
    expect(unknown.code).toBe(5);
  }, 30_000);

  test('usage: a job id is required and checked; --async takes no --out', async () => {
    expect((await cli(['status'])).code).toBe(2);
    expect((await cli(['wait', 'a', 'b'])).code).toBe(2);
    expect((await cli(['cancel', 'x!'])).code).toBe(2);
    expect((await cli(['status', 'job-1', '--out', 'f.csv'])).code).toBe(2);
    const r = await cli(['check', '-', '--async', '--out', 'f.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('proxycheck wait <jobId> --out FILE');
  });
});

describe(`a plain check of more than ${ASYNC_THRESHOLD} entries`, () => {
  test('is submitted asynchronously and followed, through a proxy that cuts every connection after 2 s', async () => {
    // more than the threshold: refused at once, plus black holes that hold the job past the 2 s cuts
    const list = listFile('big.txt', [...working(5, 'bg'), ...refusing(ASYNC_THRESHOLD, 90), ...holes(20, 82)]);
    const cutsBefore = cutter.cuts();
    const r = await cli(['check', list, '--timeout', '4000', '--job-id', 'cli-big'], `http://127.0.0.1:${cutter.port}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('submitted asynchronously');
    const total = ASYNC_THRESHOLD + 25;
    expect(r.stdout).toContain(`Checked ${total.toLocaleString('en-US')} proxies`);
    expect(r.stdout).toMatch(/Working: 5 \//);
    expect(cutter.cuts()).toBeGreaterThan(cutsBefore); // the CLI's connections were cut while it followed
    expect(t.logs.some((l) => l.msg === 'request' && l.path === '/check' && l.status === 202)).toBe(true);
    expect(await job('cli-big')).toMatchObject({ status: 'completed', progress: { checked: total, total } });
  }, 60_000);

  test('Ctrl-C while following leaves the job running; wait takes it up again', async () => {
    const list = listFile('big2.txt', [...refusing(ASYNC_THRESHOLD, 91), ...holes(10, 83)]);
    const accepted = () => t.logs.filter((l) => l.msg === 'request' && l.path === '/check' && l.status === 202).length;
    const acceptedBefore = accepted();
    const child = spawnCli(['check', list, '--timeout', '5000', '--job-id', 'cli-ctrl-c']);
    const stderr = new Response(child.stderr).text();
    await until('the job to run', async () => (await job('cli-ctrl-c'))?.status === 'running', 15_000);
    // the scan row says running before the 202 reaches the CLI: interrupted in between, the CLI
    // rightly cannot tell that the job was accepted; wait for the answer to be sent, and a moment
    await until('the 202 to be sent', async () => accepted() > acceptedBefore, 15_000);
    await Bun.sleep(300);
    child.kill('SIGINT');
    expect(await child.exited).toBe(130);
    expect(await stderr).toContain('Job cli-ctrl-c goes on on the server');
    expect((await job('cli-ctrl-c')).status).toBe('running');
    const w = await cli(['wait', 'cli-ctrl-c']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toContain(`Checked ${(ASYNC_THRESHOLD + 10).toLocaleString('en-US')} proxies`);
  }, 60_000);
});
