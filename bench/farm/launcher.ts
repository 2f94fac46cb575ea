/**
 * Starts the proxy farm (several bench/farm/worker.ts processes: the hard
 * open-file limit is 20 000 per process and each farm process holds the
 * accepted sockets plus the upstream ones) and the judge
 * (bench/farm/judge.ts, its own process), and writes lists and manifests.
 *
 * Refused ports: ports bound once on 0.0.0.0 and released, so nothing
 * listens there when the run starts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nextJson, spawnChild, type Child } from '../e2e/proc';
import { LISTENING, listText, type Entry, type FarmPorts, type LatencyModel } from './entries';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const JUDGE = fileURLToPath(new URL('./judge.ts', import.meta.url));

export interface FarmOptions {
  processes: number;
  portsPerBehaviour: number;
  refusedPorts: number;
  latency: LatencyModel;
  slowMs: number;
}

export interface Farm {
  ports: FarmPorts;
  pids: number[];
  stop(): Promise<void>;
}

export interface Judge {
  url: string;
  pid: number;
  /** the key it signs with: the service's JUDGE_KEY */
  key: string;
  stop(): Promise<void>;
}

function freePorts(n: number): number[] {
  const held = [];
  for (let i = 0; i < n; i++) {
    held.push(Bun.listen({ hostname: '0.0.0.0', port: 0, socket: { data() {} } }));
  }
  const ports = held.map((l) => l.port);
  for (const l of held) l.stop(true);
  return ports;
}

export async function startFarm(opts: FarmOptions): Promise<Farm> {
  const children: Child[] = [];
  try {
    for (let i = 0; i < opts.processes; i++) {
      children.push(
        spawnChild(`farm${i}`, [process.execPath, WORKER], {
          FARM_CONFIG: JSON.stringify({ portsPerBehaviour: opts.portsPerBehaviour, latency: opts.latency, slowMs: opts.slowMs }),
        }),
      );
    }
    const replies = await Promise.all(children.map((c) => nextJson<{ ports: Record<string, number[]>; pid: number }>(c, 15_000)));
    const listen = Object.fromEntries(LISTENING.map((b) => [b, [] as number[]])) as FarmPorts['listen'];
    // interleave processes so consecutive ids land on different processes
    for (const b of LISTENING) {
      const per = replies.map((r) => r.ports[b] ?? []);
      for (let k = 0; k < opts.portsPerBehaviour; k++) for (const p of per) if (p[k] !== undefined) listen[b as keyof FarmPorts['listen']].push(p[k]!);
    }
    return {
      ports: { listen, refused: freePorts(opts.refusedPorts) },
      pids: replies.map((r) => r.pid),
      stop: async () => {
        await Promise.all(children.map((c) => c.stop(2000)));
      },
    };
  } catch (err) {
    await Promise.all(children.map((c) => c.stop(1000)));
    throw err;
  }
}

export async function startJudge(): Promise<Judge> {
  const key = randomBytes(32).toString('base64url');
  const child = spawnChild('judge', [process.execPath, JUDGE], { JUDGE_KEY: key });
  try {
    const r = await nextJson<{ url: string; pid: number }>(child, 15_000);
    return { url: r.url, pid: r.pid, key, stop: () => child.stop(2000) };
  } catch (err) {
    await child.stop(1000);
    throw err;
  }
}

/** Writes <dir>/<name>.txt (the list) and <dir>/<name>.manifest.tsv (id, address, port, behaviour, delay ms). */
export function writeListAndManifest(dir: string, name: string, entries: readonly Entry[]): { list: string; manifest: string } {
  mkdirSync(dir, { recursive: true });
  const list = join(dir, `${name}.txt`);
  const manifest = join(dir, `${name}.manifest.tsv`);
  writeFileSync(list, listText(entries));
  let m = 'id\taddress\tport\tbehaviour\tdelay_ms\n';
  for (const e of entries) m += `${e.g}\t${e.host}\t${e.port}\t${e.behaviour}\t${e.delayMs ?? ''}\n`;
  writeFileSync(manifest, m);
  return { list, manifest };
}
