/**
 * `proxycheck pool ...` as a subprocess against the real service on
 * 127.0.0.1: create from a file, addresses and standard input, list, show,
 * add, remove, pause, resume, working (txt only on standard output, as a
 * cron job wants it; filters; --scheme; csv; json), delete; --json; the exit codes of
 * bad command lines (2), no key (3) and a pool that is not the account's
 * (5), and the help text.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POOL_CSV_COLUMNS } from '../../src/pools/render';
import { runCli } from '../helpers/cli';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let dir: string;
let file: string;

beforeAll(async () => {
  // a balance that covers the pools' schedule: no balance_runs_out warning under the reports
  t = await startTestService({ POOL_MIN_INTERVAL_S: '10', POOL_ROUNDS: 'false' /* verdicts seeded, none checked */, BOOTSTRAP_CHECKS: '100000' });
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-pools-'));
  file = join(dir, 'list.txt');
  writeFileSync(file, '# my proxies\n127.0.0.1:8001\nalice:s3cret@127.0.0.2:8002\n127.0.0.3:8003:bob:pw\nnot a proxy\n127.0.0.1:8001\n');
}, 60_000);
afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

const env = (over: Record<string, string | undefined> = {}) => {
  const e: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), PROXYCHECK_URL: t.url, PROXYCHECK_API_KEY: t.key };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete e[k];
    else e[k] = v;
  }
  return e;
};
const cli = (args: string[], o: { stdin?: string; env?: Record<string, string | undefined> } = {}) => runCli(args, { env: env(o.env), ...(o.stdin !== undefined ? { stdin: o.stdin } : {}) });

describe('a pool from the command line', () => {
  let id = '';

  test('create from a file, an address and standard input; the id and what to run next', async () => {
    const r = await cli(['pool', 'create', 'scraper list', file, '127.0.0.4:8004', '-', '--interval', '60', '--timeout', '3000', '--no-https'], { stdin: '127.0.0.5:8005\n' });
    expect([r.code, r.stderr]).toEqual([0, '']);
    id = /Created pool ([a-z0-9]{20}) "scraper list" with 5 proxies \(skipped: 1 invalid, 1 duplicate\)\./.exec(r.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    expect(r.stdout).toContain('working ones every 1m 0s');
    expect(r.stdout).toContain(`The working ones, one per line: proxycheck pool working ${id}`);
  });

  test('list and show, human and --json', async () => {
    const list = await cli(['pool', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+name\s+state\s+proxies\s+working\s+failed\s+unchecked\s+interval\s+next check$/);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+scraper list\\s+active\\s+5\\s+0\\s+0\\s+5\\s+1m 0s\\s+now`));
    const json = JSON.parse((await cli(['--json', 'pool', 'list'])).stdout);
    expect(json.pools.map((p: { id: string }) => p.id)).toEqual([id]);
    const show = await cli(['pool', 'show', id]);
    expect(show.stdout).toContain(`pool        ${id}  "scraper list"`);
    expect(show.stdout).toContain('proxies     5: 0 working, 0 failed, 5 unchecked');
    expect(show.stdout).toContain('checks      http from us1, timeout 3000 ms, https off, working ones every 1m 0s');
    expect(JSON.parse((await cli(['pool', 'show', id, '--json'])).stdout)).toMatchObject({ id, interval_s: 60, timeout: 3000, https: false });
  });

  test('add and remove', async () => {
    const add = await cli(['pool', 'add', id, '127.0.0.6:8006', '127.0.0.1:8001']);
    expect([add.code, add.stdout]).toEqual([0, `Added 1 proxy to pool ${id}; it holds 6 proxies now.\n`]);
    const rm = await cli(['pool', 'remove', id, '-'], { stdin: '127.0.0.6:8006\n127.0.0.5:8005\n' });
    expect([rm.code, rm.stdout]).toEqual([0, `Removed 2 proxies from pool ${id}; it holds 4 proxies now.\n`]);
  });

  test('pause and resume', async () => {
    const p = await cli(['pool', 'pause', id]);
    expect([p.code, p.stdout]).toEqual([0, `Paused pool ${id}: nothing is checked or charged until \`proxycheck pool resume ${id}\`.\n`]);
    expect((await cli(['pool', 'list'])).stdout).toContain('paused by you');
    expect((await cli(['pool', 'resume', id])).stdout).toBe(`Resumed pool ${id}.\n`);
  });

  test('working: the working proxies as given, one per line, and nothing else; filters; csv; json', async () => {
    const de = { country: 'DE', country_name: 'Germany', location: 'Berlin', isp: 'Example', asn: 64500, coordinates: null };
    await seedVerdicts(t.service.database.db, id, {
      poolType: 'http',
      intervalS: 60,
      nowMs: Date.now(),
      // 8001 elite in DE, alice transparent, bob failed, 8004 elite elsewhere
      plan: (row) =>
        row.port === 8003
          ? [{ probe: failed() }]
          : [{ probe: working(row.port - 7990, { anonymity: row.port === 8002 ? 'transparent' : 'elite' }), geo: row.port === 8001 ? de : null }],
    });
    const r = await cli(['pool', 'working', id]);
    expect(r).toEqual({ code: 0, stdout: '127.0.0.1:8001\nalice:s3cret@127.0.0.2:8002\n127.0.0.4:8004\n', stderr: '' });
    expect((await cli(['pool', 'working', id, '--anonymity', 'elite'])).stdout).toBe('127.0.0.1:8001\n127.0.0.4:8004\n');
    expect((await cli(['pool', 'working', id, '--country', 'de'])).stdout).toBe('127.0.0.1:8001\n');
    expect((await cli(['pool', 'working', id, '--limit', '2'])).stdout).toBe('127.0.0.1:8001\nalice:s3cret@127.0.0.2:8002\n');
    expect((await cli(['pool', 'working', id, '--type', 'socks5'])).stdout).toBe('');
    // --scheme: each with its protocol, credentials in the URL form (what a scraper reads without being told)
    expect(await cli(['pool', 'working', id, '--scheme'])).toEqual({ code: 0, stdout: 'http://127.0.0.1:8001\nhttp://alice:s3cret@127.0.0.2:8002\nhttp://127.0.0.4:8004\n', stderr: '' });
    expect((await cli(['pool', 'working', id, '--scheme', '--limit', '1'])).stdout).toBe('http://127.0.0.1:8001\n');
    const csv = (await cli(['pool', 'working', id, '--format', 'csv'])).stdout.split('\r\n');
    expect(csv[0]).toBe(POOL_CSV_COLUMNS.join(','));
    expect(csv.slice(1, 4).map((l) => l.split(',').slice(0, 6).join(','))).toEqual([
      '127.0.0.1,8001,false,,,working',
      '127.0.0.2,8002,true,alice,s3cret,working',
      '127.0.0.4,8004,false,,,working',
    ]);
    const json = JSON.parse((await cli(['pool', 'working', id, '--json'])).stdout);
    expect(json.proxies.map((p: { proxy: { port: number }; latency_p50_ms: number }) => [p.proxy.port, p.latency_p50_ms])).toEqual([
      [8001, 11],
      [8002, 12],
      [8004, 14],
    ]);
  });

  test('delete; then the pool is gone (exit 5)', async () => {
    expect((await cli(['pool', 'delete', id])).stdout).toBe(`Deleted pool ${id} with its proxies and their history.\n`);
    const gone = await cli(['pool', 'show', id]);
    expect(gone.code).toBe(5);
    expect(gone.stderr).toBe(`proxycheck: GET /pools/${id} was refused (HTTP 404, Not found: No pool with this id in this account).\n`);
    expect((await cli(['pool', 'working', id])).code).toBe(5);
    expect((await cli(['pool', 'list'])).stdout).toBe('No pools yet. Create one: proxycheck pool create <name> proxies.txt\n');
  });
});

describe('exit codes and help', () => {
  test('2: a bad command line, with the message (and the usage text for the command line itself)', async () => {
    const cases: [string[], string][] = [
      [['pool'], 'pool needs an action: create, list, show, add, remove, pause, resume, delete, working'],
      [['pool', 'stop', 'abcdefghij'], 'unknown pool action "stop"'],
      [['pool', 'show'], 'pool show needs the pool\'s id'],
      [['pool', 'show', 'NOT-AN-ID'], '"NOT-AN-ID" is not a pool id'],
      [['pool', 'create', 'x'], 'pool create needs a file of proxies, - for standard input, or proxy addresses'],
      [['pool', 'list', '--interval', '60'], '--interval is an option of "pool create", not of "pool list"'],
      [['pool', 'working', 'abcdefghij', '--country', 'Germany'], '--country must be a two-letter country code'],
      [['pool', 'working', 'abcdefghij', '--format', 'xml'], '--format must be one of json, txt, csv'],
      [['pool', 'create', 'x', '1.1.1.1:80', '--timeout', '50'], '--timeout must be 1000..20000'],
      [['pool', 'list', '--samples', '2'], '--samples is an option of "check", not of "pool"'],
      [['me', '--country', 'DE'], '--country is an option of "pool", not of "me"'],
      [['pool', 'create', 'x', join(dir, 'missing.txt')], 'cannot read'],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 2]);
      expect(r.stderr).toContain(message);
    }
  });

  test('3: no key', async () => {
    const r = await cli(['pool', 'list'], { env: { PROXYCHECK_API_KEY: undefined } });
    expect(r.code).toBe(3);
  });

  test('5: the server refuses (an invalid region)', async () => {
    const r = await cli(['pool', 'create', 'x', '127.0.0.1:1', '--region', 'mars1']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('POST /pools was refused (HTTP 400, Invalid region).');
  });

  test('pool --help, help pool', async () => {
    const h = await cli(['pool', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('pool working <id>');
    expect((await cli(['help', 'pool'])).stdout).toBe(h.stdout);
    expect((await cli(['--help'])).stdout).toContain('pool <action>');
  });
});
