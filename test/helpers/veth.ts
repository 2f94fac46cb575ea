/**
 * A second IPv4 address of this host for tests, on a veth pair of the test's
 * own: the host end gets 169.254.<x>.1/30 (link-local), the peer end lives in
 * a network namespace of the test's own (169.254.<x>.2), so deleting the
 * namespace removes both ends. A server bound to the host end's address is
 * reached over it: a connection to it from this host has that address as its
 * local address (the kernel's local route for it names it as the source).
 *
 * Needs root (CAP_NET_ADMIN) and `ip`; `createVeth` resolves null (with the
 * reason in `vethUnavailable`) when either is missing or the kernel refuses,
 * so a test can `test.if(veth !== null)`. Names carry the process id; leftovers
 * of test processes that are gone (killed before their cleanup) are removed
 * on the next creation. Only names with this prefix are ever touched.
 */
import { spawnSync } from 'node:child_process';

const PREFIX = 'plxla';

export interface Veth {
  /** the host end's address (the test's second address) */
  hostAddress: string;
  /** the namespace end's address */
  peerAddress: string;
  namespace: string;
  hostLink: string;
  /** removes the namespace (and with it both ends); idempotent */
  remove(): void;
}

export let vethUnavailable = '';

function ip(...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/** Deletes namespaces of this helper whose test process is gone. */
function removeLeftovers(): void {
  const list = ip('netns', 'list');
  if (!list.ok) return;
  for (const line of list.out.split('\n')) {
    const name = line.trim().split(/\s+/)[0] ?? '';
    const m = new RegExp(`^${PREFIX}(\\d+)(?:x\\d+)?$`).exec(name);
    if (m !== null && !alive(Number(m[1]))) ip('netns', 'del', name);
  }
}

/** A /30 in 169.254.0.0/16 that no interface of this host uses yet, or null. */
function freeSubnet(): number | null {
  const used = ip('-4', '-o', 'addr', 'show').out;
  for (let i = 0; i < 200; i++) {
    const x = 20 + ((process.pid + i) % 200);
    if (!used.includes(`169.254.${x}.`)) return x;
  }
  return null;
}

export interface VethOptions {
  /** Several pairs in one test process: a distinct number per pair (0-9). */
  slot?: number;
  /**
   * Make the namespace a small host of its own: loopback up and a default
   * route through the host end, so a process run in it (`ip netns exec`)
   * reaches every address of this host, with the peer address as its source.
   */
  defaultRoute?: boolean;
}

export function createVeth(opts: VethOptions = {}): Veth | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    vethUnavailable = 'not root on Linux';
    return null;
  }
  if (!ip('-V').ok) {
    vethUnavailable = 'no `ip` command';
    return null;
  }
  removeLeftovers();
  const x = freeSubnet();
  if (x === null) {
    vethUnavailable = 'no free 169.254.x.0/30';
    return null;
  }
  const slot = opts.slot === undefined ? '' : String(opts.slot);
  const namespace = `${PREFIX}${process.pid}${slot === '' ? '' : `x${slot}`}`;
  const hostLink = `${PREFIX}${process.pid % 100000}${slot}h`.slice(0, 15);
  const peerLink = `${PREFIX}${process.pid % 100000}${slot}p`.slice(0, 15);
  const hostAddress = `169.254.${x}.1`;
  const peerAddress = `169.254.${x}.2`;
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    ip('netns', 'del', namespace);
    ip('link', 'del', hostLink); // gone with the namespace already, unless the move failed
  };
  const steps: string[][] = [
    ['netns', 'add', namespace],
    ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', peerLink, 'netns', namespace],
    ['addr', 'add', `${hostAddress}/30`, 'dev', hostLink],
    ['link', 'set', hostLink, 'up'],
    ['-n', namespace, 'addr', 'add', `${peerAddress}/30`, 'dev', peerLink],
    ['-n', namespace, 'link', 'set', peerLink, 'up'],
    ...(opts.defaultRoute === true
      ? [
          ['-n', namespace, 'link', 'set', 'lo', 'up'],
          ['-n', namespace, 'route', 'add', 'default', 'via', hostAddress],
        ]
      : []),
  ];
  for (const s of steps) {
    const r = ip(...s);
    if (!r.ok) {
      vethUnavailable = `ip ${s.join(' ')}: ${r.out}`;
      remove();
      return null;
    }
  }
  process.once('exit', remove); // a run that dies after its tests but before afterAll
  return { hostAddress, peerAddress, namespace, hostLink, remove };
}
