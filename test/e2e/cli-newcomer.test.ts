/**
 * A newcomer's first day with the CLI (issue 34), as a subprocess against
 * real services on 127.0.0.1: a mixed list of a real SOCKS5 daemon
 * (microsocks) and an HTTP proxy checked with the default type (the hint to
 * use --type auto), `--simple --scheme` (each line with its protocol), a
 * forgotten ALLOW_PRIVATE_TARGETS (the summary names it), one machine
 * (the summary and `regions` say every region probes from it; `health`
 * shows the judge's reach and the gateway), a wrong key (the auth error
 * before anything else), `login` on another port (asked on a terminal;
 * "Cannot reach" names --url), the warnings of a pool answer (a crafted
 * POST /pools / PATCH answer carrying balance_runs_out), and killing the
 * launcher (or the npm above it) by its pid leaves no CLI process running.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { runCli, REPO, type CliRun } from '../helpers/cli';
import { poolObjectFixture } from '../helpers/pool-object';
import { startTestService, type TestService } from '../helpers/service';
import { microsocksArgs } from '../interop/configs';
import { findBinary, startDaemon, stopAllDaemons, type RunningDaemon } from '../interop/daemons';

const MICROSOCKS = findBinary('microsocks');

let t: TestService;
let guarded: TestService; // ALLOW_PRIVATE_TARGETS off, a gateway on
let dir: string;
let http: FakeServer;
let socks: RunningDaemon | null = null;
let mixed: string;

beforeAll(async () => {
  [t, guarded] = await Promise.all([startTestService({ BOOTSTRAP_CHECKS: '500' }), startTestService({ BOOTSTRAP_CHECKS: '500', ALLOW_PRIVATE_TARGETS: 'false', GATEWAY_PORT: '0' })]);
  http = await startHttpProxy();
  if (MICROSOCKS !== null) socks = await startDaemon({ name: 'microsocks', bin: MICROSOCKS, args: (_dir, port) => microsocksArgs(port) });
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-newcomer-'));
  mixed = join(dir, 'mixed.txt');
  writeFileSync(mixed, `127.0.0.1:${socks?.port ?? 1}\n127.0.0.1:${http.port}\n`);
}, 60_000);

afterAll(async () => {
  await http?.close();
  await stopAllDaemons();
  await Promise.all([t?.stop(), guarded?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

function env(service: TestService, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const e: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), PROXYCHECK_URL: service.url, PROXYCHECK_API_KEY: service.key };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete e[k];
    else e[k] = v;
  }
  return e;
}

const cli = (args: string[], o: { service?: TestService; env?: Record<string, string | undefined>; stdin?: string } = {}): Promise<CliRun> =>
  runCli(args, { env: env(o.service ?? t, o.env), ...(o.stdin !== undefined ? { stdin: o.stdin } : {}) });

describe('a mixed list of HTTP and SOCKS proxies', () => {
  test.skipIf(MICROSOCKS === null)('checked as http (the default): the SOCKS proxy fails and the summary says to use --type auto', async () => {
    const r = await cli(['check', mixed, '--timeout', '2000', '--no-https']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Working: 1 / 2 (50.0%)');
    expect(r.stdout).toContain('bad_response');
    // the probe names the SOCKS answer in the record's message; the summary turns it into the hint
    expect(r.stdout).toContain(
      'Hint: 1 proxy answered like a SOCKS server on this http check: check again with --type auto (tries http, socks4 and socks5), or write socks5:// (or socks4://) before them in the list.',
    );
  }, 30_000);

  test.skipIf(MICROSOCKS === null)('the SOCKS proxy written socks5:// in the list: both work with no flag; --simple --scheme keeps each protocol', async () => {
    const schemed = join(dir, 'schemed.txt');
    writeFileSync(schemed, `socks5://127.0.0.1:${socks!.port}\n127.0.0.1:${http.port}\n`);
    const r = await cli(['check', schemed, '--timeout', '3000', '--no-https', '--simple', '--scheme']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([`http://127.0.0.1:${http.port}`, `socks5://127.0.0.1:${socks!.port}`]);
    expect(r.stderr).toContain('Working: 2 / 2');
    expect(r.stderr).not.toContain('Hint:');
  }, 30_000);

  test.skipIf(MICROSOCKS === null)('--type auto --simple --scheme: every working proxy with its protocol, nothing else on standard output', async () => {
    const r = await cli(['check', mixed, '--type', 'auto', '--timeout', '3000', '--no-https', '--simple', '--scheme']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([`http://127.0.0.1:${http.port}`, `socks5://127.0.0.1:${socks!.port}`]);
    expect(r.stderr).toContain('Working: 2 / 2');
    expect(r.stderr).not.toContain('Hint:');
    // into a file, the same lines
    const out = join(dir, 'working.txt');
    expect((await cli(['check', mixed, '--type', 'auto', '--timeout', '3000', '--no-https', '--simple', '--scheme', '--out', out])).code).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual([`http://127.0.0.1:${http.port}`, `socks5://127.0.0.1:${socks!.port}`]);
  }, 30_000);
});

describe('what the service is', () => {
  test('a forgotten ALLOW_PRIVATE_TARGETS: the summary names the setting', async () => {
    const r = await cli(['check', `127.0.0.1:${http.port}`, '10.0.0.1:8080'], { service: guarded });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Hint: 2 proxies are on private, loopback or reserved addresses: refused (blocked_target), not checked, not charged.');
    expect(r.stdout).toContain('ALLOW_PRIVATE_TARGETS=true');
  }, 30_000);

  test('one machine: the summary and regions say every region probes from it', async () => {
    const r = await cli(['check', `127.0.0.1:${http.port}`, '--no-https']);
    expect(r.stdout).toMatch(/^Checked 1 proxy \[http, us1 \(probed from this machine\), timeout 2000ms\] in /m);
    expect(r.stdout).not.toContain('Washington');
    const regions = await cli(['regions']);
    expect(regions.code).toBe(0);
    expect(regions.stdout).toContain('This service runs on one machine: every region probes from this machine');
    // --json stays the API's body
    expect(JSON.parse((await cli(['--json', 'regions'])).stdout).default).toBe('us1');
  }, 30_000);

  test("health shows the judge's reach and where the gateway listens", async () => {
    const plain = await cli(['health']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^regions +\d+, all probed from this machine$/m);
    expect(plain.stdout).toMatch(/^judge +(reachable from .+|at the address its operator set)$/m);
    expect(plain.stdout).toMatch(/^gateway +off \(the operator turns it on with GATEWAY_PORT\)$/m);
    const withGateway = await cli(['health'], { service: guarded });
    const port = (JSON.parse((await cli(['--json', 'health'], { service: guarded })).stdout) as { gateway: { port: number } }).gateway.port;
    expect(withGateway.stdout).toMatch(new RegExp(`^gateway +127\\.0\\.0\\.1:${port} \\(\`proxycheck pool gateway <id>\` prints a pool's proxy URLs\\)$`, 'm'));
  }, 30_000);
});

describe('signing in', () => {
  test('a wrong key: the auth error, before "Checking" and before any WebSocket note', async () => {
    const r = await cli(['check', `127.0.0.1:${http.port}`, '--key', 'pc_wrong']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('proxycheck: Authentication failed (Invalid API key: The provided API key is not valid). Pass a valid key with --key, set PROXYCHECK_API_KEY, or run `proxycheck login`.\n');
  }, 30_000);

  test('"Cannot reach" names --url and PROXYCHECK_URL', async () => {
    const port = await refusedPort();
    const r = await cli(['login', '--key', t.key], { env: { PROXYCHECK_URL: `http://127.0.0.1:${port}`, XDG_CONFIG_HOME: join(dir, 'nowhere') } });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`Cannot reach http://127.0.0.1:${port} (GET /me): connection refused (is the service running?). Another address (the service's PORT or host)? Pass --url http://HOST:PORT, set PROXYCHECK_URL`);
  }, 30_000);

  test('login on a terminal asks for the URL (the default shown), then the key', async () => {
    const cfg = join(dir, 'tty-cfg');
    const inner = `stty cols 100 rows 40; exec '${process.execPath}' src/cli/main.ts login`;
    const child = Bun.spawn(['script', '-q', '-e', '-c', inner, '/dev/null'], {
      cwd: REPO,
      env: env(t, { PROXYCHECK_URL: undefined, PROXYCHECK_API_KEY: undefined, XDG_CONFIG_HOME: cfg, TERM: 'xterm-256color', LANG: 'C.UTF-8' }),
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = child.stdout.getReader();
    let out = '';
    const until = async (what: string) => {
      while (!out.includes(what)) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
    };
    await until('Service URL [http://127.0.0.1:3000]: ');
    child.stdin.write(`${t.url.replace('http://', '')}\n`);
    child.stdin.flush();
    await until(`API key for ${t.url}: `);
    child.stdin.write(`${t.key}\r`);
    child.stdin.flush();
    await until('Logged in');
    await until('\n');
    expect(await child.exited).toBe(0);
    expect(out).toContain(`Logged in to ${t.url} as demo@localhost.`);
    expect(out).not.toContain(t.key); // typed hidden
    expect(JSON.parse(readFileSync(join(cfg, 'proxycheck', 'config.json'), 'utf8'))).toEqual({ url: t.url, key: t.key });
  }, 30_000);
});

describe("a pool answer's warnings", () => {
  test('a pool whose schedule costs more than the balance: pool create says so', async () => {
    // 2 proxies every 60 s: up to 2,880 checks a day against the account's 500
    const r = await cli(['pool', 'create', 'too costly', '127.0.0.1:1', '127.0.0.1:2', '--interval', '60']);
    expect(r.code).toBe(0);
    const id = /Created pool ([a-z0-9]+) /.exec(r.stdout)?.[1] ?? '';
    expect(r.stdout).toMatch(/\nWarning: .*2,880 checks a day.*\n$/);
    expect((await cli(['pool', 'delete', id])).code).toBe(0);
  }, 30_000);

  test('pool create, add and pause print balance_runs_out under their report', async () => {
    const message = 'This pool checks 5 proxies every 60 s: up to 7,200 checks a day, and the account has 1,000 left. They run out in about 3.3 hours.';
    const pool = poolObjectFixture(Date.now(), { counts: { total: 5, working: 0, failed: 0, unchecked: 5 }, interval_s: 60 });
    const answer = { ...pool, submitted: { added: 5, removed: 0, total_invalid: 0, total_duplicates: 0 }, warnings: [{ code: 'balance_runs_out', message, hours_left: 3.3 }] };
    // the answers as the service gives them when the schedule costs more than the balance
    const crafted = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => (req.method === 'POST' || req.method === 'PATCH' ? Response.json(answer) : Response.json({ error: 'Not found', message: 'no' }, { status: 404 })),
    });
    try {
      const e = { PROXYCHECK_URL: `http://127.0.0.1:${crafted.port}` };
      const created = await cli(['pool', 'create', 'scraper', '127.0.0.1:1', '--interval', '60'], { env: e });
      expect(created.code).toBe(0);
      expect(created.stdout).toContain(`Created pool ${pool.id} "scraper list" with 5 proxies.\n`);
      expect(created.stdout).toEndWith(`\nWarning: ${message}\n`);
      expect((await cli(['pool', 'add', pool.id, '127.0.0.1:2'], { env: e })).stdout).toEndWith(`now.\nWarning: ${message}\n`);
      expect((await cli(['pool', 'resume', pool.id], { env: e })).stdout).toBe(`Resumed pool ${pool.id}.\nWarning: ${message}\n`);
      // --json: the answer as it came
      expect(JSON.parse((await cli(['--json', 'pool', 'resume', pool.id], { env: e })).stdout).warnings).toEqual(answer.warnings);
    } finally {
      await crafted.stop(true);
    }
  }, 30_000);
});

/** The pids of `pid`'s children (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await Bun.sleep(50);
  }
  return what();
}

describe('the launcher (src/cli/bin.mjs) killed by its pid', () => {
  /** `sh -c 'node bin.mjs login; true'` (as npx runs it: npm's shell, then the launcher, then Bun), waiting for a key on standard input. */
  async function chain(npm: boolean) {
    const e = env(t, { PROXYCHECK_API_KEY: undefined, XDG_CONFIG_HOME: join(dir, 'kill-cfg'), ...(npm ? { npm_command: 'exec' } : {}) });
    const sh = Bun.spawn(['sh', '-c', `node '${join(REPO, 'src/cli/bin.mjs')}' login; true`], { cwd: dir, env: e, stdin: 'pipe', stdout: 'ignore', stderr: 'ignore' });
    let node = 0;
    let bun = 0;
    await waitFor(() => {
      node = childrenOf(sh.pid)[0] ?? 0;
      bun = node === 0 ? 0 : (childrenOf(node)[0] ?? 0);
      return bun !== 0;
    }, 10_000);
    expect(bun).not.toBe(0);
    return { sh, node, bun };
  }

  test('SIGTERM to the launcher ends the CLI', async () => {
    const { sh, node, bun } = await chain(false);
    process.kill(node, 'SIGTERM');
    expect(await waitFor(() => !alive(bun) && !alive(node), 5000)).toBe(true);
    await sh.exited;
  }, 30_000);

  test('SIGKILL to the launcher: the CLI sees it gone and ends', async () => {
    const { sh, node, bun } = await chain(false);
    process.kill(node, 'SIGKILL');
    expect(await waitFor(() => !alive(bun), 5000)).toBe(true);
    await sh.exited;
  }, 30_000);

  test("run by npm: npm's shell killed, the launcher and the CLI end", async () => {
    const { sh, node, bun } = await chain(true);
    sh.kill('SIGKILL');
    expect(await waitFor(() => !alive(bun) && !alive(node), 5000)).toBe(true);
  }, 30_000);
});
