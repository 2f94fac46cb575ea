/**
 * The `proxycheck` CLI as a subprocess against a real running service and
 * fake proxies on 127.0.0.1: non-TTY progress lines and summary, --out in
 * csv/txt/json (--only-working, stdout), stdin input, ClearProxy's habits
 * (inline addresses, --simple, set-key, the region list once), custom URLs, me /
 * regions / health / login (config file 0600), every exit code (0, 2, 3, 4,
 * 5, 6, 130), --type auto --samples 3 (protocols, exits, a lying proxy, the
 * CSV's extra columns), the TTY bar in a pseudo-terminal (util-linux `script`), and
 * the Node launcher (src/cli/bin.mjs) that runs the CLI in Bun.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpProxy, startRotatingProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { injectScript, startTamperingProxy } from '../fixtures/tampering-proxy';
import { refusedPort, startBlackHole, startTarget, type FakeServer } from '../fixtures/fake-servers';
import { CSV_AUTO_COLUMNS, CSV_COLUMNS, CSV_HTTPS_COLUMN, CSV_SAMPLE_COLUMNS } from '../../src/results/export';
import { startTestService, type TestService } from '../helpers/service';
import { REPO, runCli, type CliRun } from '../helpers/cli';

let t: TestService;
let dir: string;
let elite: FakeServer, anon: FakeServer, hole: FakeServer, target: FakeServer;
let refused: number;
let list: string;
let submitted: { elite: string; anon: string; refused: string };
const servers: FakeServer[] = [];

beforeAll(async () => {
  t = await startTestService({ BOOTSTRAP_CHECKS: '500' });
  elite = await startHttpProxy();
  anon = await startHttpProxy({ addHeaders: () => [['Via', '1.1 fake']] });
  hole = await startBlackHole();
  target = await startTarget({ '/ok': { status: 200, body: 'Hello Proxy World' } });
  servers.push(elite, anon, hole, target);
  refused = await refusedPort();
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-'));
  submitted = {
    elite: `127.0.0.1:${elite.port}:alice:s3:cret`,
    anon: `bob:p%40ss@127.0.0.1:${anon.port}`,
    refused: `127.0.0.1:${refused}`,
  };
  list = join(dir, 'list.txt');
  writeFileSync(list, `# my proxies\n${submitted.elite}\r\n${submitted.anon}\n\n${submitted.refused}\nnot a proxy\n`);
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'cfg'),
    PROXYCHECK_URL: t.url,
    PROXYCHECK_API_KEY: t.key,
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

const cli = (args: string[], opts: { env?: Record<string, string | undefined>; stdin?: string; launcher?: boolean } = {}): Promise<CliRun> =>
  runCli(args, { env: cliEnv(opts.env), ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}), ...(opts.launcher ? { launcher: true } : {}) });

describe('check (not a TTY)', () => {
  test('plain progress lines on stderr, summary and links on stdout', async () => {
    const r = await cli(['check', list, '--timeout', '1000']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Checking 4 entries from .*list\.txt on http:\/\/127\.0\.0\.1:\d+ \(job cli-[A-Za-z0-9_-]+\)$/m);
    expect(r.stderr).toMatch(/^progress 100\.0% {2}3\/3 checked {2}2 working {2}done in \d+:\d\d$/m);
    expect(r.stderr).not.toContain('\x1b[');
    expect(r.stdout).toContain('Checked 3 proxies [http, us1 (probed from this machine), timeout 1000ms] in ');
    expect(r.stdout).toContain('Working: 2 / 3 (66.7%)   skipped: 1 invalid');
    expect(r.stdout).toMatch(/^  elite +1  50\.0%$/m);
    expect(r.stdout).toMatch(/^  anonymous +1  50\.0%$/m);
    expect(r.stdout).toContain('Top countries');
    expect(r.stdout).toContain('Top ISPs');
    expect(r.stdout).toMatch(/ {2}JSON {2}http:\/\/127\.0\.0\.1:\d+\/result\/[A-Za-z0-9_-]{22}\.json\?token=/);
    expect(r.stdout).toMatch(/ {2}CSV {3}http:\/\/.*\.csv\?token=/);
    expect(r.stdout).toMatch(/ {2}TXT {3}http:\/\/.*\.txt\?token=/);
    expect(r.stdout).not.toContain('\x1b[');
    // a plain check shows none of the auto / samples / integrity additions; the https check runs by default
    expect(r.stdout).not.toMatch(/Rotating|Protocols|Lying/);
    expect(r.stdout).toMatch(/^ {2}proxy +status +time +https +error$/m);
    expect(r.stdout).toMatch(new RegExp(`^  alice@127\\.0\\.0\\.1:${elite.port} +working +\\d+ ms +yes$`, 'm'));
  }, 20_000);

  test('--out csv (--no-https: the contract columns, no proxy table): every field of every proxy; --only-working keeps the working rows', async () => {
    const out = join(dir, 'all.csv');
    const r = await cli(['check', list, '--timeout', '1000', '--out', out, '--no-https']);
    expect(r.stdout).not.toContain('Proxies (');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Saved CSV (3 rows) to ${out}`);
    const lines = readFileSync(out, 'utf8').split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines.slice(1, -1)).toHaveLength(3);
    expect(lines.at(-1)).toBe('');
    expect(lines.find((l) => l.startsWith(`127.0.0.1,${elite.port},true,alice,s3:cret,working,200,`))).toBeDefined();
    expect(lines.find((l) => l.startsWith(`127.0.0.1,${refused},false,,,failed,,`) && l.includes(',connect_refused,'))).toBeDefined();

    const w = join(dir, 'working.csv');
    const r2 = await cli(['check', list, '--timeout', '1000', '--out', w, '--only-working']);
    expect(r2.code).toBe(0);
    expect(r2.stdout).toContain(`Saved CSV (2 rows, working only) to ${w}`);
    const rows = readFileSync(w, 'utf8').trim().split('\r\n');
    expect(rows).toHaveLength(3);
    expect(rows[0]).toBe([...CSV_COLUMNS, CSV_HTTPS_COLUMN].join(','));
    expect(rows.slice(1).every((l) => l.includes(',working,200,') && l.endsWith(',true'))).toBe(true);
  }, 20_000);

  test('--out txt: working proxies in the form they were submitted', async () => {
    const out = join(dir, 'w.txt');
    const r = await cli(['check', list, '--timeout', '1000', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Saved TXT (2 working proxies) to ${out}`);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual([submitted.anon, submitted.elite].sort());
  }, 20_000);

  test('stdin in, --out - --format txt: the list on stdout, everything else on stderr', async () => {
    const r = await cli(['check', '-', '--timeout', '1000', '--out', '-', '--format', 'txt'], { stdin: readFileSync(list, 'utf8') });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([submitted.anon, submitted.elite].sort());
    expect(r.stderr).toContain('from standard input');
    expect(r.stderr).toContain('Working: 2 / 3');
  }, 20_000);

  test('--json with --out json --only-working: the check response on stdout, a filtered result file', async () => {
    const out = join(dir, 'w.json');
    const r = await cli(['--json', 'check', list, '--timeout', '1000', '--out', out, '--only-working']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.summary.total_working).toBe(2);
    expect(Object.keys(body.result_urls)).toEqual(['json', 'csv', 'txt']);
    expect(r.stderr).toContain(`Saved JSON (`);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    expect(file.proxies).toHaveLength(2);
    expect(file.proxies.every((p: { status: string }) => p.status === 'working')).toBe(true);
    expect(file.summary.total_working).toBe(2);
  }, 20_000);

  test('custom URLs: per-URL results in the summary', async () => {
    const r = await cli([
      'check', list, '--timeout', '1000',
      '--custom-url', `http://127.0.0.1:${target.port}/ok,200,proxy world`,
      '--custom-url', `http://127.0.0.1:${target.port}/ok,,PROXY WORLD`,
      '--case-sensitive',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${target.port}/ok +0 +2 +0\\.00%`));
    expect(r.stdout).toMatch(/Custom URL +passed +failed +rate/);
  }, 20_000);

  test('--type auto --samples 3: protocols, samples and exits per proxy, rotating and lying counts, the CSV columns', async () => {
    const rotating = await startRotatingProxy();
    const socks = await startSocksProxy();
    const liar = await startTamperingProxy({ rewrite: injectScript });
    servers.push(rotating, socks, liar);
    const auto = join(dir, 'auto.txt');
    writeFileSync(auto, [rotating, socks, liar].map((s) => `127.0.0.1:${s.port}`).concat(`127.0.0.1:${refused}`).join('\n'));
    const out = join(dir, 'auto.csv');
    const before = JSON.parse((await cli(['--json', 'me'])).stdout).user.checks as number;
    const r = await cli(['check', auto, '--type', 'auto', '--samples', '3', '--timeout', '1000', '--out', out]);
    expect(r.code).toBe(0);
    const after = JSON.parse((await cli(['--json', 'me'])).stdout).user.checks as number;
    expect(before - after).toBe(12); // the body carried samples: 4 proxies x 3
    const o = r.stdout;
    expect(o).toContain('Checked 4 proxies [auto, us1 (probed from this machine), timeout 1000ms] in ');
    expect(o).toContain('Working: 2 / 4 (50.0%)');
    expect(o).toContain('Rotating: 1 / 2 working');
    expect(o).toMatch(/^ {2}Protocols +proxies +share$/m);
    expect(o).toMatch(/^ {2}http +1 +50\.0%$/m);
    expect(o).toMatch(/^ {2}socks5 +1 +50\.0%$/m);
    expect(o).toContain('Proxies (4)');
    expect(o).toMatch(/^ {2}proxy +status +time +protocols +https +samples +exits +error$/m);
    expect(o).toMatch(new RegExp(`^  127\\.0\\.0\\.1:${rotating.port} +working +\\d+ ms +http +yes +3/3 +3 rotating$`, 'm'));
    expect(o).toMatch(new RegExp(`^  127\\.0\\.0\\.1:${socks.port} +working +\\d+ ms +socks5 socks4 +yes +3/3 +1$`, 'm'));
    expect(o).toMatch(new RegExp(`^  127\\.0\\.0\\.1:${liar.port} +failed +\\d+ ms +none +- +0/3 +- +tampered$`, 'm'));
    expect(o).toMatch(new RegExp(`^  127\\.0\\.0\\.1:${refused} +failed +\\d+ ms +none +- +0/3 +- +connect_refused$`, 'm'));
    expect(o).toContain('Lying proxies: 1 of 4 (tampered 1)');
    expect(o).toMatch(new RegExp(`^  127\\.0\\.0\\.1:${liar.port} +tampered +http: bytes injected: `, 'm'));
    expect(o).toContain(`Saved CSV (4 rows) to ${out}`);
    const lines = readFileSync(out, 'utf8').split('\r\n');
    expect(lines[0]).toBe([...CSV_COLUMNS, ...CSV_AUTO_COLUMNS, ...CSV_SAMPLE_COLUMNS, CSV_HTTPS_COLUMN].join(','));
    expect(lines.find((l) => l.startsWith(`127.0.0.1,${socks.port},`))).toContain(',socks5,socks5 socks4,3,3,100.00%,127.0.0.1,1,');
    expect(lines.find((l) => l.startsWith(`127.0.0.1,${liar.port},`))).toContain(',tampered,');
    // --only-working converts here (src/results/export.ts): the same columns
    const w = join(dir, 'auto-working.csv');
    const r2 = await cli(['check', auto, '--type', 'auto', '--samples', '2', '--timeout', '1000', '--out', w, '--only-working']);
    expect(r2.code).toBe(0);
    expect(r2.stdout).toContain('Rotating: 1 / 2 working');
    const rows = readFileSync(w, 'utf8').trim().split('\r\n');
    expect(rows[0]).toBe([...CSV_COLUMNS, ...CSV_AUTO_COLUMNS, ...CSV_SAMPLE_COLUMNS, CSV_HTTPS_COLUMN].join(','));
    expect(rows).toHaveLength(3);
  }, 30_000);
});

describe("ClearProxy's habits", () => {
  test('check takes inline addresses, several, beside a file and standard input', async () => {
    const r = await cli(['check', `127.0.0.1:${elite.port}`, list, '-', `127.0.0.1:${refused}`, '--timeout', '1000'], { stdin: `127.0.0.1:${anon.port}\n` });
    expect(r.code).toBe(0);
    // 2 inline + 4 entries of the file + 1 from stdin; the inline refused proxy is the file's (a duplicate);
    // the inline and stdin ones without credentials are other proxies than the file's with them
    expect(r.stderr).toMatch(/^Checking 7 entries from .*list\.txt, standard input and 2 addresses on the command line on /m);
    expect(r.stdout).toContain('Checked 5 proxies');
    expect(r.stdout).toContain('Working: 4 / 5 (80.0%)   skipped: 1 invalid, 1 duplicate');
    const one = await cli(['check', `127.0.0.1:${refused}`, '--timeout', '1000']);
    expect(one.code).toBe(0);
    expect(one.stderr).toMatch(/^Checking 1 entry from 1 address on the command line on /m);
    expect(one.stdout).toContain('Working: 0 / 1 (0.0%)');
    // neither a file nor an address: the file error, exit 2
    const bad = await cli(['check', 'nonsense-list.txt']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cannot read nonsense-list.txt: no such file');
  }, 20_000);

  test('--simple: only the working proxies on standard output, as submitted; with --out into the file', async () => {
    const r = await cli(['check', list, '--timeout', '1000', '--simple']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([submitted.anon, submitted.elite].sort());
    expect(r.stderr).toContain('Working: 2 / 3');
    const out = join(dir, 'simple.txt');
    const f = await cli(['check', list, '--timeout', '1000', '--simple', '--out', out]);
    expect(f.code).toBe(0);
    expect(f.stdout).toContain(`Saved TXT (2 working proxies) to ${out}`);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual([submitted.anon, submitted.elite].sort());
  }, 20_000);

  test('set-key KEY is login: verified, saved, used', async () => {
    const cfgHome = join(dir, 'set-key-cfg');
    const env = { XDG_CONFIG_HOME: cfgHome, PROXYCHECK_API_KEY: undefined, PROXYCHECK_URL: undefined };
    const bad = await cli(['set-key', 'pc_wrong', '--url', t.url], { env });
    expect(bad.code).toBe(3);
    const ok = await cli(['set-key', t.key, '--url', t.url], { env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Logged in to ${t.url} as demo@localhost.`);
    expect(JSON.parse(readFileSync(join(cfgHome, 'proxycheck', 'config.json'), 'utf8'))).toEqual({ url: t.url, key: t.key });
    expect((await cli(['me'], { env })).code).toBe(0);
  });

  test('an invalid region prints the region list once', async () => {
    const r = await cli(['check', list, '--region', 'mars1']);
    expect(r.code).toBe(5);
    expect(r.stderr.split('us1').length - 1).toBe(1);
    expect(r.stderr).toContain('(`proxycheck regions` names them)');
  });
});

describe('exit codes', () => {
  test('2: usage errors and unreadable input, with the usage text', async () => {
    const a = await cli(['check', list, '--timeout', '50']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('proxycheck: --timeout must be 1000..20000; got 50');
    expect(a.stderr).toContain('usage: proxycheck');
    const b = await cli(['check', join(dir, 'missing.txt')]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('no such file');
    const c = await cli(['check', '-'], { stdin: '# nothing\n\n' });
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('no proxies in standard input');
    expect((await cli(['nope'])).code).toBe(2);
  });

  test('3: no key, a wrong key', async () => {
    const none = await cli(['me'], { env: { PROXYCHECK_API_KEY: undefined } });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('No API key');
    const wrong = await cli(['check', list, '--key', 'pc_wrong']);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('Authentication failed (Invalid API key: The provided API key is not valid)');
  });

  test('4: not enough checks, saying how many are missing', async () => {
    const me = JSON.parse((await cli(['--json', 'me'])).stdout);
    const balance: number = me.user.checks;
    const big = join(dir, 'big.txt');
    const n = balance + 25;
    writeFileSync(big, Array.from({ length: n }, (_, i) => `127.0.0.1:${refused}:u${i}:p`).join('\n'));
    const r = await cli(['check', big]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`Not enough checks: this list needs ${n.toLocaleString('en-US')} checks but the account has ${balance}: 25 missing.`);
  });

  test('5: other 4xx (invalid region)', async () => {
    const r = await cli(['check', list, '--region', 'mars1']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('POST /check was refused (HTTP 400, Invalid region');
  });

  test('6: nothing listening', async () => {
    const r = await cli(['health'], { env: { PROXYCHECK_URL: `http://127.0.0.1:${refused}` } });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`Cannot reach http://127.0.0.1:${refused} (GET /health): connection refused`);
  });

  test('130: Ctrl-C during a check', async () => {
    const slow = join(dir, 'slow.txt');
    writeFileSync(slow, `127.0.0.1:${hole.port}\n127.0.0.1:${hole.port}:a:b\n`);
    const child = Bun.spawn([process.execPath, 'src/cli/main.ts', 'check', slow, '--timeout', '8000'], {
      cwd: REPO,
      env: cliEnv(),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = child.stderr.getReader();
    let err = '';
    while (!/progress +0\.0%/.test(err)) {
      const { value, done } = await reader.read();
      if (done) break;
      err += new TextDecoder().decode(value);
    }
    const t0 = Date.now();
    child.kill('SIGINT');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      err += new TextDecoder().decode(value);
    }
    expect(await child.exited).toBe(130);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toMatch(/Interrupted\. The server may still finish job cli-[A-Za-z0-9_-]+/);
  }, 20_000);
});

describe('me, regions, health, login', () => {
  test('me: balance, plan, usage chart, recent checks', async () => {
    const r = await cli(['me']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Account   demo@localhost');
    expect(r.stdout).toMatch(/Balance {3}\d+ checks {2}\(base \d+, promotional 0\)/);
    expect(r.stdout).toContain('Plan      pay per check');
    expect(r.stdout).toContain('Checks per day, last 30 days (UTC)');
    expect(r.stdout).toContain('└──────────────────────────────');
    expect(r.stdout).toMatch(/Recent checks \(\d+ of \d+\)/);
    const l = await cli(['me', '--links', '--no-color']);
    expect(l.stdout).toMatch(/\/result\/[A-Za-z0-9_-]{22}\.json\?token=/);
  });

  test('regions and health, human and --json', async () => {
    const r = await cli(['regions']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/us1 +Washington DC, USA +16 +default/);
    expect(JSON.parse((await cli(['--json', 'regions'])).stdout).default).toBe('us1');
    const h = await cli(['health']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^status +ok$/m);
    expect(h.stdout).toMatch(/^database +ok$/m);
  });

  test('login verifies the key, writes the config file 0600, and later commands use it', async () => {
    const cfgHome = join(dir, 'login-cfg');
    const env = { XDG_CONFIG_HOME: cfgHome, PROXYCHECK_API_KEY: undefined, PROXYCHECK_URL: undefined };
    const bad = await cli(['login', '--key', 'pc_wrong', '--url', t.url], { env });
    expect(bad.code).toBe(3);
    expect(existsSync(join(cfgHome, 'proxycheck', 'config.json'))).toBe(false);
    const ok = await cli(['login', '--url', t.url], { env, stdin: `${t.key}\n` });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Logged in to ${t.url} as demo@localhost.`);
    const file = join(cfgHome, 'proxycheck', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(cfgHome, 'proxycheck')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: t.url, key: t.key });
    const me = await cli(['me'], { env });
    expect(me.code).toBe(0);
    expect(me.stdout).toContain('demo@localhost');
    // env beats the file
    expect((await cli(['me'], { env: { ...env, PROXYCHECK_API_KEY: 'pc_wrong' } })).code).toBe(3);
  });
});

describe('in a terminal', () => {
  test('the live bar, then the summary (pseudo-terminal via script)', async () => {
    const slow = join(dir, 'tty.txt');
    writeFileSync(slow, `${readFileSync(list, 'utf8')}127.0.0.1:${hole.port}\n`);
    const inner = `stty cols 100 rows 40; exec '${process.execPath}' src/cli/main.ts check '${slow}' --timeout 1000`;
    const child = Bun.spawn(['script', '-q', '-e', '-c', inner, '/dev/null'], {
      cwd: REPO,
      env: cliEnv({ TERM: 'xterm-256color', LANG: 'C.UTF-8' }),
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, , code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(0);
    const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
    expect(out).toContain('\x1b[?25l'); // cursor hidden while the bar runs...
    expect(out).toContain('\x1b[?25h'); // ...and shown again
    expect(out).toContain('\r\x1b[2K'); // redrawn in place
    expect(plain).toMatch(/Checking ▕[█▏▎▍▌▋▊▉ ]+▏ +\d+\.\d%  \d\/4  \d working/);
    expect(plain).toMatch(/✔ Done ▕█{40}▏ 100\.0% {2}4\/4 {2}2 working {2}[\d,.]+\/s {2}in \d+:\d\d/);
    expect(out).toContain('\x1b[32m'); // colour on a terminal
    expect(plain).toContain('Working: 2 / 4 (50.0%)');
    expect(plain).toContain('Top countries');
    expect(plain).not.toMatch(/^progress /m); // no log lines on a TTY
  }, 20_000);
});

describe('the Node launcher (src/cli/bin.mjs)', () => {
  test('runs the CLI in Bun from Node and passes exit codes on', async () => {
    const v = await cli(['--version'], { launcher: true });
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^proxycheck \d+\.\d+\.\d+\n$/);
    expect((await cli(['check'], { launcher: true })).code).toBe(2);
    const out = join(dir, 'launcher.txt');
    const r = await cli(['check', list, '--timeout', '1000', '--out', out], { launcher: true });
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  }, 20_000);
});
