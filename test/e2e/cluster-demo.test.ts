/**
 * `npm run cluster:demo` (scripts/cluster-demo.ts) as a user runs it: spawned,
 * it prints the dashboard URLs and the CLI commands once both agents are
 * live; the printed CLI command checks the printed local proxy through API
 * node 2 (an agent probes it); Ctrl-C (SIGINT to the script only) stops every
 * process it started (each pid seen under it before is gone after), and its
 * database and temporary directory are removed. Skipped without PostgreSQL or
 * nats-server.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import postgres from 'postgres';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER } from '../helpers/nats-server';
import { readLines } from '../helpers/process';

const PG = testDatabaseUrl();
const ROOT = resolve(import.meta.dir, '../..');

/** Every descendant of pid (from /proc/<pid>/stat's ppid). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = readFileSync(`/proc/${e}/stat`, 'latin1');
      parent.set(Number(e), Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out.slice(1);
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('npm run cluster:demo', () => {
  let demo: ReturnType<typeof Bun.spawn> | null = null;
  afterAll(() => {
    if (demo !== null && demo.exitCode === null) demo.kill('SIGKILL');
  });

  test('prints URLs and CLI commands; a check through API node 2 works; Ctrl-C stops every child and drops the database', async () => {
    const proc = Bun.spawn([process.execPath, 'scripts/cluster-demo.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: PG!, DEMO_PORT: '0', LOG_LEVEL: 'info' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    demo = proc;
    let out = '';
    let err = '';
    const waiters: (() => void)[] = [];
    void readLines(proc.stdout, (l) => {
      out += l + '\n';
      for (const w of waiters.splice(0)) w();
    });
    void readLines(proc.stderr, (l) => {
      err += l + '\n';
    });
    const until = async (re: RegExp, ms: number): Promise<RegExpExecArray> => {
      const end = Date.now() + ms;
      for (;;) {
        const m = re.exec(out);
        if (m !== null) return m;
        if (proc.exitCode !== null) throw new Error(`the demo exited (${proc.exitCode}):\n${out}\n${err}`);
        if (Date.now() > end) throw new Error(`not printed within ${ms} ms: ${re}\n${out}\n${err}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(200)]);
      }
    };

    await until(/Ctrl-C stops everything/, 90_000);
    const api1 = (await until(/^ {2}(http:\/\/127\.0\.0\.1:\d+)\/app$/m, 1000))[1]!;
    const api2 = [...out.matchAll(/^ {2}(http:\/\/127\.0\.0\.1:\d+)\/app$/gm)].map((m) => m[1]!)[1]!;
    expect(api2).toBeDefined();
    expect(api2).not.toBe(api1);
    const db = (await until(/database\s+(postgres:\/\/\S+)/, 1000))[1]!;
    const cli = (await until(/^ {2}(echo (\S+) \| npm run cli -- --url (\S+) --key (\S+) check - --region (\S+))$/m, 1000));
    const [, , proxy, cliUrl, key, region] = cli;
    expect(cliUrl).toBe(api2);

    // the printed CLI command, run as printed (npm run cli = bun src/cli/main.ts): the check goes through API node 2 to an agent
    const check = Bun.spawn([process.execPath, 'src/cli/main.ts', '--url', cliUrl!, '--key', key!, '--json', 'check', '-', '--region', region!], {
      cwd: ROOT,
      stdin: new Blob([`${proxy}\n`]),
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [cliOut, cliErr, code] = await Promise.all([new Response(check.stdout).text(), new Response(check.stderr).text(), check.exited]);
    expect(code, `${cliOut}\n${cliErr}`).toBe(0);
    expect(JSON.parse(cliOut).summary.total_working).toBe(1);

    // the dashboard is served by both API nodes; both see the agents
    for (const u of [api1, api2]) {
      expect((await fetch(`${u}/app`)).status).toBe(200);
      const regions = (await (await fetch(`${u}/regions`)).json()) as { regions: { code: string; agents: number }[] };
      expect(regions.regions.find((r) => r.code === region)?.agents).toBe(2);
    }

    const children = descendants(proc.pid);
    expect(children.length).toBeGreaterThanOrEqual(5); // nats-server, 2 API nodes, 2 agents
    const dir = /Logs: (\S+)\/logs/.exec(out)![1]!;
    expect(existsSync(dir)).toBe(true);

    proc.kill('SIGINT');
    expect(await proc.exited).toBe(0);
    expect(out).toContain('agent 2 stopped');
    expect(out).toContain('nats-server stopped');
    for (const pid of children) expect(alive(pid), `pid ${pid} still runs`).toBe(false);
    expect(existsSync(dir)).toBe(false);
    const name = new URL(db).pathname.slice(1);
    const sql = postgres(PG!, { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql`SELECT 1 FROM pg_database WHERE datname = ${name}`;
      expect(rows.length).toBe(0);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, 150_000);
});
