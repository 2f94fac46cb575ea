/**
 * How a job's grants become shards (pure). A grant of n slots becomes the
 * next n probe tasks: task t probes proxy floor(t / samples), one task per
 * sample (samples.ts; with samples = 1 a task is a list entry); in the custom-URL stage, the next n (working
 * proxy, URL) pairs, numbered URL-major (pair p = (working[p % W], rule
 * floor(p / W))), one shard per URL touched, so every shard carries one rule.
 * An auto job's pairs go through each proxy's detected protocol: `settings`
 * is then a function of the proxy's index, and a URL's pairs are split into
 * one shard per settings object (at most three: one per protocol).
 */
import type { CustomUrlRule, ProbeSettings, ProbeTask } from '../probe/types';
import type { ProxyAddress } from '../proxy/types';
import type { Shard } from './ports';
import { proxyOfTask } from './samples';

/** What a probe task carries of a proxy: its address, and credentials only when it has a username. */
export function probeTarget(p: ProxyAddress): ProxyAddress {
  return p.username === undefined ? { host: p.host, port: p.port } : { host: p.host, port: p.port, username: p.username, password: p.password ?? '' };
}

/** The probe shard of tasks [from, end) (`samples` tasks per list entry). */
export function probeShard(proxies: readonly ProxyAddress[], from: number, end: number, settings: ProbeSettings, samples = 1): Shard {
  const tasks: ProbeTask[] = new Array(end - from);
  for (let t = from, k = 0; t < end; t++, k++) tasks[k] = { index: t, proxy: probeTarget(proxies[proxyOfTask(t, samples)]!) };
  return { kind: 'probe', tasks, settings };
}

/** The probe shard of the tasks numbered `indexes` (probes tried again: retries.ts). */
export function probeShardOf(proxies: readonly ProxyAddress[], indexes: readonly number[], settings: ProbeSettings, samples = 1): Shard {
  const tasks: ProbeTask[] = new Array(indexes.length);
  for (let k = 0; k < indexes.length; k++) tasks[k] = { index: indexes[k]!, proxy: probeTarget(proxies[proxyOfTask(indexes[k]!, samples)]!) };
  return { kind: 'probe', tasks, settings };
}

/**
 * `shard` split by the settings of each of its tasks (`settingsOf(task
 * index)`): a mixed list's proxies are probed with the settings of their own
 * protocol (DECISIONS "Mixed lists"). One shard per settings object, in the
 * order first met; `shard` itself when all of its tasks keep its settings.
 */
export function splitBySettings(shard: Shard, settingsOf: (task: number) => ProbeSettings): Shard[] {
  const groups = new Map<ProbeSettings, ProbeTask[]>();
  for (const t of shard.tasks) {
    const s = settingsOf(t.index);
    let tasks = groups.get(s);
    if (tasks === undefined) groups.set(s, (tasks = []));
    tasks.push(t);
  }
  if (groups.size <= 1 && (groups.size === 0 || groups.has(shard.settings))) return [shard];
  return [...groups].map(([settings, tasks]) => ({ ...shard, tasks, settings }));
}

/** The custom-URL shards of pairs [from, end), each with the job's index of its rule. */
export function urlShards(
  proxies: readonly ProxyAddress[],
  working: readonly number[],
  rules: readonly CustomUrlRule[],
  from: number,
  end: number,
  settings: ProbeSettings | ((index: number) => ProbeSettings),
): { shard: Shard; urlIndex: number }[] {
  const w = working.length;
  const out: { shard: Shard; urlIndex: number }[] = [];
  let p = from;
  while (p < end) {
    const urlIndex = Math.floor(p / w);
    const stop = Math.min(end, (urlIndex + 1) * w);
    const groups = new Map<ProbeSettings, ProbeTask[]>();
    for (let q = p; q < stop; q++) {
      const idx = working[q % w]!;
      const s = typeof settings === 'function' ? settings(idx) : settings;
      let tasks = groups.get(s);
      if (tasks === undefined) groups.set(s, (tasks = []));
      tasks.push({ index: idx, proxy: probeTarget(proxies[idx]!) });
    }
    p = stop;
    for (const [s, tasks] of groups) out.push({ shard: { kind: 'custom_url', tasks, rules: [rules[urlIndex]!], settings: s }, urlIndex });
  }
  return out;
}
