/**
 * `npm run cluster:demo`: a whole cluster on this machine, to look at and to
 * point the dashboard and the CLI at (docs/OPERATIONS.md "Running a cluster").
 *
 * Starts, in this order (each undone in reverse on Ctrl-C / SIGTERM):
 *   1. nats-server -js on 127.0.0.1, a free port, a temporary store
 *      (never the machine's 4222; not installed: a message naming
 *      `apt-get install nats-server`, exit 1)
 *   2. a fresh PostgreSQL database `proxycheck_demo_<time>` on DATABASE_URL's
 *      server (default postgres://postgres@127.0.0.1:5432/postgres), dropped
 *      at the end
 *   3. a local HTTP proxy to check (the tests' fake forward proxy)
 *   4. API node 1, then API node 2 (ROLE=api, `bun src/main.ts` as
 *      `npm start` runs it), the same RESULT_SECRET / ADMIN_TOKEN (generated
 *      for the demo) and the demo account's key (BOOTSTRAP_API_KEY, printed),
 *      ALLOW_PRIVATE_TARGETS=true (an API node refuses a literal private
 *      address before any agent sees it)
 *   5. agent 1 and agent 2 (ROLE=agent, REGION=us1 or DEMO_REGION), each
 *      hosting its own judge on its listener, ALLOW_PRIVATE_TARGETS=true (the
 *      judge is on loopback: only proxies on this machine can reach it)
 * then waits until GET /regions on API node 1 shows both agents and prints
 * the dashboard URLs, the CLI commands, every process's pid and where the
 * logs are (a temporary directory, removed at the end).
 *
 * Children run in their own process groups, so a terminal's Ctrl-C reaches
 * only this script, which stops them in reverse order: agents (SIGTERM: they
 * drain), API nodes, the proxy, nats-server, then drops the database and the
 * temporary directory. A second Ctrl-C kills what is left at once. If this
 * script exits any other way, what is still running is killed.
 *
 * Settings (environment): DATABASE_URL (a server the demo may create a
 * database on), DEMO_PORT (API node 1's port, node 2 gets the next; default
 * 0: any free ports), DEMO_REGION (default us1).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { startHttpProxy } from '../test/fixtures/fake-proxies';
import { npmStartEnv } from './start-env';

const ROOT = resolve(import.meta.dir, '..');
const NATS_BIN = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p)) ?? Bun.which('nats-server');
const SERVER = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REGION = process.env.DEMO_REGION || 'us1';
const BASE_PORT = Number(process.env.DEMO_PORT || 0);
const DEMO_KEY = 'pc_ClusterDemoKey_0000000000000001';

const say = (line = '') => process.stdout.write(line + '\n');

interface Proc {
  name: string;
  child: ChildProcess;
  log: WriteStream;
  exited: Promise<void>;
}

const procs: Proc[] = [];
const undo: { what: string; run: () => Promise<void> }[] = [];
const dir = mkdtempSync(join(tmpdir(), 'pc-cluster-demo-'));
const logs = join(dir, 'logs');
mkdirSync(logs);

/** Spawns a child in its own process group, its output into logs/<name>.log; resolves with its 'ready' log line. */
function startChild(name: string, cmd: string[], env: Record<string, string>, readyTimeoutMs = 60_000): { proc: Proc; ready: Promise<Record<string, unknown>> } {
  const log = createWriteStream(join(logs, `${name}.log`));
  const child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc: Proc = { name, child, log, exited };
  procs.push(proc);
  const ready = new Promise<Record<string, unknown>>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready within ${readyTimeoutMs / 1000} s (see ${join(logs, `${name}.log`)})`)), readyTimeoutMs);
    let buf = '';
    const onData = (d: Buffer) => {
      log.write(d);
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        try {
          const j = JSON.parse(line) as Record<string, unknown>;
          if (j.msg === 'ready') {
            clearTimeout(timer);
            resolvePromise(j);
          }
        } catch {
          // not JSON
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${child.exitCode}, signal ${child.signalCode}); its log: ${join(logs, `${name}.log`)}\n${readTail(join(logs, `${name}.log`))}`));
    });
  });
  ready.catch(() => {});
  return { proc, ready };
}

function readTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

async function stopProc(p: Proc, graceMs: number): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    try {
      p.child.kill('SIGTERM');
    } catch {
      // gone
    }
    const timer = setTimeout(() => {
      try {
        p.child.kill('SIGKILL');
      } catch {
        // gone
      }
    }, graceMs);
    await p.exited;
    clearTimeout(timer);
  }
  p.log.end();
}

async function startNats(): Promise<{ url: string; proc: Proc }> {
  const store = join(dir, 'nats-store');
  const ports = join(dir, 'nats-ports');
  mkdirSync(ports);
  const { proc } = startChild('nats-server', [NATS_BIN!, '-js', '-a', '127.0.0.1', '-p', '-1', '-sd', store, '--ports_file_dir', ports], {});
  const deadline = Date.now() + 10_000;
  for (;;) {
    const file = readdirSync(ports).find((f) => f.endsWith('.ports'));
    if (file !== undefined) {
      try {
        const u = (JSON.parse(readFileSync(join(ports, file), 'utf8')) as { nats?: string[] }).nats?.[0];
        if (u !== undefined) return { url: `nats://127.0.0.1:${new URL(u).port}`, proc };
      } catch {
        // being written
      }
    }
    if (proc.child.exitCode !== null) throw new Error(`nats-server exited: ${readTail(join(logs, 'nats-server.log'))}`);
    if (Date.now() > deadline) throw new Error('nats-server did not start within 10 s');
    await Bun.sleep(20);
  }
}

async function createDemoDatabase(): Promise<string> {
  const name = `proxycheck_demo_${Date.now().toString(36)}`;
  const admin = postgres(SERVER, { max: 1, onnotice: () => undefined, connect_timeout: 5 });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } catch (err) {
    throw new Error(`cannot create a database on ${redact(SERVER)} (${(err as Error).message}); set DATABASE_URL to a PostgreSQL server the demo may create a database on`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  undo.push({
    what: `database ${name} dropped`,
    run: async () => {
      const a = postgres(SERVER, { max: 1, onnotice: () => undefined });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end({ timeout: 5 });
      }
    },
  });
  const u = new URL(SERVER);
  u.pathname = `/${name}`;
  return u.toString();
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

async function regionAgents(apiUrl: string): Promise<number> {
  const r = await fetch(`${apiUrl}/regions`);
  const b = (await r.json()) as { regions: { code: string; agents?: number }[] };
  return b.regions.find((x) => x.code === REGION)?.agents ?? 0;
}

let stopping: Promise<void> | null = null;
function stopAll(reason: string): Promise<void> {
  stopping ??= (async () => {
    say(`\n${reason}: stopping in reverse order`);
    for (const step of undo.reverse()) {
      try {
        await step.run();
        say(`  ${step.what}`);
      } catch (err) {
        say(`  ${step.what}: FAILED ${(err as Error).message}`);
      }
    }
    rmSync(dir, { recursive: true, force: true });
    say('  temporary directory removed; done');
  })();
  return stopping;
}

let interrupts = 0;
const onSignal = (sig: string) => {
  if (++interrupts > 1) {
    for (const p of procs) p.child.kill('SIGKILL');
    process.exit(130);
  }
  void stopAll(sig).finally(() => process.exit(0));
};
process.on('SIGINT', () => onSignal('SIGINT'));
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('exit', () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
});

async function main(): Promise<void> {
  if (NATS_BIN === undefined || NATS_BIN === null) {
    process.stderr.write('nats-server is not installed. On Debian/Ubuntu: apt-get install nats-server (or put a nats-server 2.9+ binary on PATH).\n');
    process.exit(1);
  }
  const secrets = { RESULT_SECRET: randomBytes(24).toString('base64url'), ADMIN_TOKEN: randomBytes(24).toString('base64url') };
  say('Starting a demo cluster on this machine...');

  const nats = await startNats();
  undo.push({ what: 'nats-server stopped', run: () => stopProc(nats.proc, 5000) });
  say(`  nats-server  ${nats.url} (pid ${nats.proc.child.pid}, temporary store)`);

  const databaseUrl = await createDemoDatabase();
  say(`  database     ${redact(databaseUrl)} (created for the demo, dropped at the end)`);

  const proxy = await startHttpProxy();
  undo.push({ what: 'demo proxy stopped', run: () => proxy.close() });
  const proxyAddr = `127.0.0.1:${proxy.port}`;

  // npm start's runtime settings (docs/OPERATIONS.md "Runtime settings"): each process runs as `npm start` would run it
  const common = { ...npmStartEnv(`${ROOT}/`), NATS_URL: nats.url, HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  const api: { url: string; proc: Proc }[] = [];
  for (let i = 1; i <= 2; i++) {
    const { proc, ready } = startChild(`api${i}`, [process.execPath, 'src/main.ts'], {
      ...common,
      ...secrets,
      ROLE: 'api',
      NODE_ID: `demo-api-${i}`,
      PORT: String(BASE_PORT === 0 ? 0 : BASE_PORT + i - 1),
      DATA_DIR: join(dir, `api${i}`),
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_API_KEY: DEMO_KEY,
      BOOTSTRAP_CHECKS: '100000',
      ALLOW_PRIVATE_TARGETS: 'true',
    });
    undo.push({ what: `API node ${i} stopped`, run: () => stopProc(proc, 15_000) });
    const line = await ready;
    api.push({ url: `http://127.0.0.1:${Number(line.port)}`, proc });
    say(`  API node ${i}   ${api[i - 1]!.url} (pid ${proc.child.pid})`);
  }

  const agents = [1, 2].map((i) => {
    const s = startChild(`agent${i}`, [process.execPath, 'src/main.ts'], {
      ...common,
      ROLE: 'agent',
      REGION,
      AGENT_ID: `demo-agent-${i}`,
      PORT: '0',
      DATA_DIR: join(dir, `agent${i}`),
      ALLOW_PRIVATE_TARGETS: 'true',
      DATABASE_URL: '',
    });
    undo.push({ what: `agent ${i} stopped`, run: () => stopProc(s.proc, 15_000) });
    return s;
  });
  for (const [i, a] of agents.entries()) {
    const line = await a.ready;
    say(`  agent ${i + 1}      ${REGION}, http://127.0.0.1:${Number(line.port)} (/judge, /health, /metrics; pid ${a.proc.child.pid}, ${String(line.slots)} slots)`);
  }
  const deadline = Date.now() + 30_000;
  while ((await regionAgents(api[0]!.url).catch(() => 0)) < 2) {
    if (Date.now() > deadline) throw new Error(`GET ${api[0]!.url}/regions does not show 2 agents of ${REGION} after 30 s`);
    await Bun.sleep(200);
  }

  const [a1, a2] = [api[0]!.url, api[1]!.url];
  say('');
  say(`Ready: ${REGION} has 2 live agents (GET ${a1}/regions).`);
  say('');
  say('Dashboard (either API node; sign in with the key below):');
  say(`  ${a1}/app`);
  say(`  ${a2}/app`);
  say(`API key (the demo account, 100000 checks): ${DEMO_KEY}`);
  say('');
  say(`CLI (a local HTTP proxy to check runs at ${proxyAddr}):`);
  say(`  echo ${proxyAddr} | npm run cli -- --url ${a2} --key ${DEMO_KEY} check - --region ${REGION}`);
  say(`  npm run cli -- --url ${a1} --key ${DEMO_KEY} regions`);
  say(`  npm run cli -- --url ${a1} --key ${DEMO_KEY} me`);
  say('');
  say(`Processes: nats-server ${nats.proc.child.pid}, api1 ${api[0]!.proc.child.pid}, api2 ${api[1]!.proc.child.pid}, agent1 ${agents[0]!.proc.child.pid}, agent2 ${agents[1]!.proc.child.pid}`);
  say(`Logs: ${logs}`);
  say('Ctrl-C stops everything and removes the demo database.');
  // keep running until a signal
  await new Promise<never>(() => {});
}

try {
  await main();
} catch (err) {
  process.stderr.write(`cluster demo failed: ${(err as Error).message}\n`);
  await stopAll('failed');
  process.exit(1);
}
