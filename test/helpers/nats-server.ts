/**
 * A private nats-server for a test: `nats-server -js` (Debian package, 2.9.10
 * here) on 127.0.0.1 and a random port (`-p -1`), with a temporary JetStream
 * store, never the machine's shared 4222 server, so runs never collide.
 *
 * `restart()` stops the server and starts it again on the same port and the
 * same store (JetStream data survives, as after a real restart), so clients
 * that reconnect by themselves find it again. `stop()` kills it and removes
 * the store; safe twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';

export const NATS_SERVER_BIN = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p));

/** True when the nats-server binary is installed (.ci/apt-packages.txt installs it in CI). */
export const HAVE_NATS_SERVER = NATS_SERVER_BIN !== undefined;

export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The server process's pid (changes on restart). */
  readonly pid: number;
  /** Stops it (SIGKILL when `hard`, else SIGTERM) and starts it again on the same port and store. */
  restart(opts?: { hard?: boolean; downMs?: number }): Promise<void>;
  /** Stops it without starting again (`hard`: SIGKILL). */
  kill(opts?: { hard?: boolean }): Promise<void>;
  /** Stops it and removes its store. Safe twice. */
  stop(): Promise<void>;
}

export interface NatsServerOptions {
  /** Address to listen on (default 127.0.0.1; 0.0.0.0 for agents in network namespaces). */
  host?: string;
  /** More command-line options (e.g. ['-m', '8222'] for the monitoring port). */
  args?: string[];
}

export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServer> {
  if (NATS_SERVER_BIN === undefined) throw new Error('nats-server is not installed (apt-get install nats-server)');
  const root = mkdtempSync(join(tmpdir(), 'pc-nats-'));
  const store = join(root, 'store');
  const ports = join(root, 'ports');
  mkdirSync(ports);
  const host = opts.host ?? '127.0.0.1';
  let child: ChildProcess;
  let port = -1;

  const launch = async (p: number): Promise<void> => {
    for (const f of readdirSync(ports)) rmSync(join(ports, f), { force: true });
    child = spawn(NATS_SERVER_BIN!, ['-js', '-a', host, '-p', String(p), '-sd', store, '--ports_file_dir', ports, ...(opts.args ?? [])], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const file = readdirSync(ports).find((f) => f.endsWith('.ports'));
      if (file !== undefined) {
        try {
          const j = JSON.parse(readFileSync(join(ports, file), 'utf8')) as { nats?: string[] };
          const u = j.nats?.[0];
          if (u !== undefined) {
            port = Number(new URL(u).port);
            return;
          }
        } catch {
          // written but not complete yet
        }
      }
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}): ${stderr}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not start: ${stderr}`);
      await Bun.sleep(20);
    }
  };

  const halt = async (hard: boolean): Promise<void> => {
    const c = child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill(hard ? 'SIGKILL' : 'SIGTERM');
    await Promise.race([exited, Bun.sleep(5_000)]);
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await exited;
    }
  };

  await launch(-1);
  let stopped: Promise<void> | null = null;
  const server: NatsServer = {
    url: `nats://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    port,
    get pid() {
      return child.pid!;
    },
    async restart(o = {}) {
      await halt(o.hard ?? false);
      if (o.downMs) await Bun.sleep(o.downMs);
      await launch(port);
    },
    kill: (o = {}) => halt(o.hard ?? false),
    stop: () =>
      (stopped ??= (async () => {
        await halt(true);
        rmSync(root, { recursive: true, force: true });
      })()),
  };
  return server;
}

/** Lets a NATS round trip pass on every connection, then `ms` more: the messages in flight have arrived. */
export async function settleNats(ms: number, ...ncs: NatsConnection[]): Promise<void> {
  for (const nc of ncs) await nc.flush();
  await Bun.sleep(ms);
}
