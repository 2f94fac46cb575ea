/**
 * Pure codec for a shard's tasks on their way to a probe thread. Structured
 * clone copies an array of {index, proxy: {host, port}} objects field by
 * field, paid again on the receiving side; packed, a task is a slot in two
 * typed arrays and a line of one string, about a tenth of the cost
 * (bench/RESULTS.md, session 2, "Packed shards").
 *
 * Hosts are joined with "\n": a parsed host (IPv4, IPv6 without brackets, a
 * host name) never contains one, and packTasks refuses a host that does
 * rather than shift every later task by one.
 */
import { ServiceError } from '../../errors';
import { DOMAIN_ERROR_CODES } from '../../error-codes';
import type { ProbeTask } from '../types';

export interface PackedTasks {
  index: Int32Array;
  port: Uint16Array;
  /** hosts joined with "\n" */
  hosts: string;
  /** [username, password] per task, null for a task without auth; null when no task has auth */
  auth: (string | null)[] | null;
}

export function packTasks(tasks: readonly ProbeTask[]): PackedTasks {
  const n = tasks.length;
  const index = new Int32Array(n);
  const port = new Uint16Array(n);
  const hosts = new Array<string>(n);
  let auth: (string | null)[] | null = null;
  for (let i = 0; i < n; i++) {
    const t = tasks[i]!;
    const p = t.proxy;
    if (p.host.includes('\n')) throw new ServiceError(DOMAIN_ERROR_CODES.PACK_BAD_HOST, `host of task ${t.index} contains a line break`);
    index[i] = t.index;
    port[i] = p.port;
    hosts[i] = p.host;
    if (p.username !== undefined) {
      auth ??= new Array<string | null>(2 * n).fill(null);
      auth[2 * i] = p.username;
      auth[2 * i + 1] = p.password ?? '';
    }
  }
  return { index, port, hosts: hosts.join('\n'), auth };
}

export function unpackTasks(packed: PackedTasks): ProbeTask[] {
  const n = packed.index.length;
  const hosts = n === 0 ? [] : packed.hosts.split('\n');
  const out = new Array<ProbeTask>(n);
  const auth = packed.auth;
  for (let i = 0; i < n; i++) {
    const user = auth === null ? null : auth[2 * i]!;
    out[i] =
      user === null
        ? { index: packed.index[i]!, proxy: { host: hosts[i]!, port: packed.port[i]! } }
        : { index: packed.index[i]!, proxy: { host: hosts[i]!, port: packed.port[i]!, username: user, password: auth![2 * i + 1]! } };
  }
  return out;
}
