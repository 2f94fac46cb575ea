/**
 * Child processes of the benchmark and what /proc says about them.
 *
 * Every child is registered on spawn and stopped by `stopAll()` (SIGTERM,
 * then SIGKILL after a grace period), which the runner calls in `finally` and
 * on SIGINT / SIGTERM. Children keep a stdin pipe: the farm, the judge and
 * the service guard exit when it closes, so even a SIGKILLed runner leaves
 * nothing behind.
 *
 * /proc readers: CPU time (user + sys, all threads, ms), per-thread CPU with
 * the thread's name, peak RSS (VmHWM) and its reset (clear_refs 5).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Subprocess } from 'bun';

const CLK_TCK = 100;

export interface Child {
  name: string;
  proc: Subprocess<'pipe', 'pipe', 'pipe'>;
  /** lines of stdout not consumed by nextJson */
  lines: string[];
  stderr: string[];
  /** resolves when more stdout arrives (or it ends) */
  moreOutput(): Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<Child>();

export function spawnChild(name: string, cmd: string[], env: Record<string, string> = {}): Child {
  const proc = Bun.spawn(cmd, {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      for (const w of waiters.splice(0)) w();
    }
    for (const w of waiters.splice(0)) w();
  })();
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr) {
      const t = dec.decode(chunk);
      stderr.push(t);
      if (stderr.length > 200) stderr.shift();
      if (process.env.E2E_VERBOSE) process.stderr.write(`[${name}] ${t}`);
    }
  })();
  let stopping: Promise<void> | null = null;
  const child: Child = {
    name,
    proc,
    lines,
    stderr,
    moreOutput: () => new Promise<void>((r) => waiters.push(r)),
    stop: (graceMs = 5000) =>
      (stopping ??= (async () => {
        children.delete(child);
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        try {
          proc.kill('SIGTERM');
        } catch {
          // already gone
        }
        const timer = setTimeout(() => {
          try {
            proc.kill('SIGKILL');
          } catch {
            // already gone
          }
        }, graceMs);
        try {
          await proc.exited;
        } finally {
          clearTimeout(timer);
        }
      })()),
  };
  children.add(child);
  return child;
}

/** The next JSON line the child prints on stdout (others are skipped). */
export async function nextJson<T>(child: Child, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    while (child.lines.length > 0) {
      const l = child.lines.shift()!.trim();
      if (l.startsWith('{')) return JSON.parse(l) as T;
    }
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited (${child.proc.exitCode}): ${child.stderr.join('').slice(-2000)}`);
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`${child.name}: no JSON line within ${timeoutMs} ms: ${child.stderr.join('').slice(-2000)}`);
    let t: ReturnType<typeof setTimeout> | null = null;
    await Promise.race([child.moreOutput(), new Promise<void>((r) => (t = setTimeout(r, Math.min(left, 200))))]);
    if (t !== null) clearTimeout(t);
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}

export function stopAllSync(): void {
  for (const c of children) {
    try {
      c.proc.kill('SIGKILL');
    } catch {
      // gone
    }
  }
  children.clear();
}

function statFields(path: string): string[] | null {
  try {
    const s = readFileSync(path, 'latin1');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** user + sys CPU of the whole process (all threads), ms. */
export function cpuMs(pid: number): { user: number; sys: number; total: number } {
  const f = statFields(`/proc/${pid}/stat`);
  if (f === null) return { user: 0, sys: 0, total: 0 };
  const user = (Number(f[11]) * 1000) / CLK_TCK;
  const sys = (Number(f[12]) * 1000) / CLK_TCK;
  return { user, sys, total: user + sys };
}

/** Live descendants of `pid` (all threads' children, recursively). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tids) {
      let kids: string;
      try {
        kids = readFileSync(`/proc/${p}/task/${t}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const k of kids.split(' ')) {
        if (k === '') continue;
        out.push(Number(k));
        walk(Number(k));
      }
    }
  };
  walk(pid);
  return out;
}

/**
 * user + sys CPU of a process tree, ms: the process (all threads), its
 * children that have exited and been waited for (cutime / cstime), and its
 * live descendants, the same way.
 */
export function treeCpuMs(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    const f = statFields(`/proc/${p}/stat`);
    if (f === null) continue;
    total += ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK;
  }
  return total;
}

export interface ThreadCpu {
  tid: number;
  name: string;
  ms: number;
}

/** CPU per thread (ms), with the thread's name (comm). */
export function threadCpu(pid: number): ThreadCpu[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: ThreadCpu[] = [];
  for (const t of tids) {
    let name = '?';
    try {
      name = readFileSync(`/proc/${pid}/task/${t}/comm`, 'latin1').trim();
    } catch {
      continue;
    }
    const f = statFields(`/proc/${pid}/task/${t}/stat`);
    if (f === null) continue;
    out.push({ tid: Number(t), name, ms: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK });
  }
  return out;
}

/** Thread CPU spent between two snapshots, grouped by thread name (main thread = 'main'). */
export function threadDelta(pid: number, before: ThreadCpu[], after: ThreadCpu[]): Record<string, number> {
  const b = new Map(before.map((t) => [t.tid, t.ms]));
  const out: Record<string, number> = {};
  for (const t of after) {
    const d = t.ms - (b.get(t.tid) ?? 0);
    if (d <= 0) continue;
    const key = t.tid === pid ? 'main' : t.name;
    out[key] = (out[key] ?? 0) + d;
  }
  return out;
}

function statusKb(pid: number, field: string): number {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(s);
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/** Peak RSS since start or the last resetPeakRss, MiB. */
export function peakRssMiB(pid: number): number {
  return statusKb(pid, 'VmHWM') / 1024;
}

export function rssMiB(pid: number): number {
  return statusKb(pid, 'VmRSS') / 1024;
}

/** Resets VmHWM to the current RSS (Linux clear_refs 5). */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** CPU time the whole machine spent busy (all processes, /proc/stat), ms. */
export function machineBusyMs(): number {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
    return (busy * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}
