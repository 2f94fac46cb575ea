/**
 * README.md's quick start, run as a newcomer runs it: the commands between
 * `<!-- quick-start:start -->` and `<!-- quick-start:end -->` against the
 * service started with `npm start` (a real process tree: npm, then Bun) on
 * an empty data dir, with fake proxies on 127.0.0.1. Its output must have
 * the shape the README shows: every line the README prints appears, in
 * order, once keys, URLs, paths, job ids and numbers are set aside
 * (readmeShape). Lines the README leaves out may be there (a newer field's
 * table); the live bar a terminal shows ("✔ Done ...") is left out of the
 * comparison, since the commands run here without a terminal.
 *
 * Set aside as well, deliberately: the service listens on a free port and
 * allows private targets (the fakes are on loopback, as the README's own run
 * was), and the CLI gets that port as PROXYCHECK_URL for `login` (the README
 * relies on the default http://127.0.0.1:3000).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureTemplate } from '../../db/pglite-template';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';

const REPO = resolve(import.meta.dir, '../..');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** A line with what varies from run to run set aside. Pure. */
function readmeShape(line: string): string {
  return line
    .replace(/pc_[A-Za-z0-9_-]+/g, '<key>')
    .replace(/\b(?:https?|wss?):\/\/[^\s"',)]+/g, '<url>')
    .replace(/(?<=^|\s)\/[^\s)]+/g, '<path>')
    .replace(/\bcli-[A-Za-z0-9_-]+/g, '<job>')
    .replace(/\d[\d,]*(?:\.\d+)?/g, 'N')
    .replace(/-{2,}/g, '--') // a table's rule is as wide as its widest cell, which the numbers set
    .replace(/\s+/g, ' ')
    .trim();
}

/** The README lines missing from `actual` (in order; blank lines and the terminal's bar skipped). Pure. */
function missingLines(shown: string, actual: string): string[] {
  const want = shown
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('✔'))
    .map(readmeShape);
  const have = actual.split('\n').map(readmeShape);
  const missing: string[] = [];
  let at = 0;
  for (const w of want) {
    const i = have.indexOf(w, at);
    if (i === -1) missing.push(w);
    else at = i + 1;
  }
  return missing;
}

/**
 * The text with the rows of its proxy table (after "Proxies (" and its rule,
 * up to the blank line) sorted: the records come in the order their checks
 * ended, which a run sets, so the table's rows are compared as a set. Pure.
 */
function rowsInAnyOrder(text: string): string {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => /^Proxies \(/.test(l.trim()));
  if (head === -1) return text;
  const first = head + 3; // "Proxies (n)", the column names, the rule
  let end = first;
  while (end < lines.length && lines[end]!.trim() !== '') end++;
  const rows = lines.slice(first, end).sort((a, b) => readmeShape(a).localeCompare(readmeShape(b)));
  return [...lines.slice(0, first), ...rows, ...lines.slice(end)].join('\n');
}

/** The fenced blocks of the README's quick start: [language, body]. */
function quickStartBlocks(): [string, string][] {
  const m = /<!-- quick-start:start -->([\s\S]*?)<!-- quick-start:end -->/.exec(README);
  if (m === null) throw new Error('README.md has no quick-start markers');
  return [...m[1]!.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((b) => [b[1]!, b[2]!]);
}

describe('readmeShape and missingLines (pure)', () => {
  test('keys, URLs, paths, job ids and numbers are set aside; words and order are not', () => {
    expect(readmeShape('Checked 5 proxies [http, us1 (Washington DC, USA), timeout 2000ms] in 0.01s')).toBe('Checked N proxies [http, usN (Washington DC, USA), timeout Nms] in Ns');
    expect(readmeShape('Logged in to http://127.0.0.1:3000 as demo@localhost. Saved the key to /tmp/x/config.json (mode 0600).')).toBe(
      'Logged in to <url> as demo@localhost. Saved the key to <path> (mode N).',
    );
    expect(readmeShape('  elite              1  33.3%')).toBe(readmeShape('  elite   12  100.0%'));
    expect(missingLines('a 1\n\nb 2\n✔ Done 3', 'x\na 7\ny\nb 9')).toEqual([]);
    expect(missingLines('a 1\nb 2', 'b 2\na 1')).toEqual(['b N']);
    expect(missingLines('Working: 3 / 5', 'Working 3 / 5')).toEqual(['Working: N / N']);
    const shown = 'Proxies (3)\n  proxy  status\n  -----  ------\n  a:1    working\n  user@a:2  working\n  b:3    failed\n\nFull result';
    const ran = 'Proxies (3)\n  proxy  status\n  -----  ------\n  user@a:7  working\n  a:8    working\n  b:9    failed\n\nFull result';
    expect(missingLines(shown, ran)).toEqual(['user@a:N working']);
    expect(missingLines(rowsInAnyOrder(shown), rowsInAnyOrder(ran))).toEqual([]);
  });
});

describe("README's quick start against `npm start`", () => {
  let dir: string;
  let server: ChildProcess;
  let serverOut = '';
  let url = '';
  let key = '';
  const fakes: FakeServer[] = [];
  let list = '';

  beforeAll(async () => {
    await ensureTemplate(); // npm's postinstall builds it; here when the install skipped scripts
    dir = mkdtempSync(join(tmpdir(), 'pc-readme-'));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'DATABASE_URL' && k !== 'TEST_DATABASE_URL') env[k] = v;
    Object.assign(env, { PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', DATA_DIR: join(dir, 'data'), ALLOW_PRIVATE_TARGETS: 'true', PROBE_THREADS: '1', LOG_LEVEL: 'info' });
    delete env.BOOTSTRAP_API_KEY;
    // its own process group, so the whole tree (npm, sh, bun) is stopped at the end
    server = spawn('npm', ['start'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const ready = new Promise<void>((resolveReady, reject) => {
      const onData = (d: Buffer) => {
        serverOut += d.toString('utf8');
        const line = serverOut.split('\n').find((l) => l.includes('"msg":"ready"'));
        if (line !== undefined) resolveReady();
      };
      server.stdout!.on('data', onData);
      server.stderr!.on('data', onData);
      server.on('exit', (code) => reject(new Error(`npm start exited (${code}) before ready:\n${serverOut}`)));
    });
    await ready;
    const readyLine = JSON.parse(serverOut.split('\n').find((l) => l.includes('"msg":"ready"'))!) as { url: string; port: number };
    url = `http://127.0.0.1:${readyLine.port}`;
    key = /pc_[A-Za-z0-9]+/.exec(serverOut)?.[0] ?? '';

    const anonymous = await startHttpProxy({ addHeaders: () => [['Via', '1.1 fake']] });
    const socks = await startSocksProxy();
    fakes.push(anonymous, socks);
    const refused = await refusedPort();
    // the shape of the README's list, a mixed one (issue 34): an HTTP proxy adding Via (2 anonymous, one
    // with credentials), a SOCKS server written socks5:// (elite, found with no flag) and the same asked
    // for http without it, a closed port, a duplicate (socks5h:// names socks5 too), an invalid line
    list = [
      `127.0.0.1:${anonymous.port}`,
      `user:secret@127.0.0.1:${anonymous.port}`,
      `socks5://127.0.0.1:${socks.port}`,
      `127.0.0.1:${socks.port}`,
      `127.0.0.1:${refused}`,
      `socks5h://127.0.0.1:${socks.port}`,
      'not-a-proxy',
    ].join('\n');
    writeFileSync(join(dir, 'proxies.txt'), `${list}\n`);
  }, 60_000);

  afterAll(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server.on('exit', r));
      process.kill(-server.pid, 'SIGTERM');
      await Promise.race([exited, Bun.sleep(15_000)]);
      if (server.exitCode === null) process.kill(-server.pid, 'SIGKILL');
    }
    await Promise.all(fakes.map((f) => f.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /** Runs a README command (`npx proxycheck ...`) in the list's directory, as the bin `npx` would run. */
  async function run(command: string, opts: { stdin?: string; env?: Record<string, string> } = {}) {
    const words = command.split(/\s+/);
    expect(words.slice(0, 2)).toEqual(['npx', 'proxycheck']);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), ...opts.env };
    const child = Bun.spawn(['node', join(REPO, 'src/cli/bin.mjs'), ...words.slice(2)], {
      cwd: dir,
      env,
      stdin: opts.stdin === undefined ? 'ignore' : new Blob([opts.stdin]),
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { code, stdout, stderr };
  }

  test('npm start prints the lines the README shows: the demo key, then ready', () => {
    const [[lang, shown]] = quickStartBlocks() as [[string, string]];
    expect(lang).toBe('text');
    expect(key).toMatch(/^pc_/);
    const logged = serverOut.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of shown.trim().split('\n')) {
      const want = JSON.parse(line) as Record<string, unknown>;
      // the judge's warning: the README's run listened on every address of a machine with no
      // public one; this one listens on loopback only, where the judge's reach is no news
      if (want.level === 'warn' && 'judgeReachable' in want) continue;
      const got = logged.find((l) => readmeShape(String(l.msg)) === readmeShape(String(want.msg)));
      expect(got === undefined ? `no log line like: ${String(want.msg)}` : '').toBe('');
      // every field the README shows is there (the service may log more), but
      // judgeReachable: the README's run listened on every address of a machine
      // with no public one; this one listens on loopback only, where the judge's
      // reach is no news and is not logged
      expect(Object.keys(want).filter((k) => !(k in got!) && k !== 'judgeReachable')).toEqual([]);
    }
  });

  test('login, then check: the output has the shape the README shows', async () => {
    const blocks = quickStartBlocks();
    const commands = blocks[1]![1]
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(blocks[1]![0]).toBe('sh');
    expect(commands).toEqual(['npx proxycheck login', 'npx proxycheck check proxies.txt']);

    const login = await run(commands[0]!, { stdin: `${key}\n`, env: { PROXYCHECK_URL: url } });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(missingLines(blocks[2]![1], login.stdout)).toEqual([]);

    const check = await run(commands[1]!); // the key and URL now come from the file login wrote
    expect(check.code).toBe(0);
    expect(missingLines(rowsInAnyOrder(blocks[3]![1]), rowsInAnyOrder(`${check.stderr}\n${check.stdout}`))).toEqual([]);
  }, 30_000);
});
