/**
 * How a job's grants become shards (pure). A grant of n slots becomes the
 * next n probes of the list; in the custom-URL stage, the next n (working
 * proxy, URL) pairs, numbered URL-major (pair p = (working[p % W], rule
 * floor(p / W))), one shard per URL touched, so every shard carries one rule.
 */
import type { CustomUrlRule, ProbeSettings, ProbeTask } from '../probe/types';
import type { ProxyAddress } from '../proxy/types';
import type { Shard } from './ports';

/** What a probe task carries of a proxy: its address, and credentials only when it has a username. */
export function probeTarget(p: ProxyAddress): ProxyAddress {
  return p.username === undefined ? { host: p.host, port: p.port } : { host: p.host, port: p.port, username: p.username, password: p.password ?? '' };
}

/** The probe shard of list entries [from, end). */
export function probeShard(proxies: readonly ProxyAddress[], from: number, end: number, settings: ProbeSettings): Shard {
  const tasks: ProbeTask[] = new Array(end - from);
  for (let i = from, k = 0; i < end; i++, k++) tasks[k] = { index: i, proxy: probeTarget(proxies[i]!) };
  return { kind: 'probe', tasks, settings };
}

/** The probe shard of the list entries at `indexes` (probes tried again: retries.ts). */
export function probeShardOf(proxies: readonly ProxyAddress[], indexes: readonly number[], settings: ProbeSettings): Shard {
  const tasks: ProbeTask[] = new Array(indexes.length);
  for (let k = 0; k < indexes.length; k++) tasks[k] = { index: indexes[k]!, proxy: probeTarget(proxies[indexes[k]!]!) };
  return { kind: 'probe', tasks, settings };
}

/** The custom-URL shards of pairs [from, end), each with the job's index of its rule. */
export function urlShards(
  proxies: readonly ProxyAddress[],
  working: readonly number[],
  rules: readonly CustomUrlRule[],
  from: number,
  end: number,
  settings: ProbeSettings,
): { shard: Shard; urlIndex: number }[] {
  const w = working.length;
  const out: { shard: Shard; urlIndex: number }[] = [];
  let p = from;
  while (p < end) {
    const urlIndex = Math.floor(p / w);
    const stop = Math.min(end, (urlIndex + 1) * w);
    const tasks: ProbeTask[] = [];
    for (let q = p; q < stop; q++) {
      const idx = working[q % w]!;
      tasks.push({ index: idx, proxy: probeTarget(proxies[idx]!) });
    }
    p = stop;
    out.push({ shard: { kind: 'custom_url', tasks, rules: [rules[urlIndex]!], settings }, urlIndex });
  }
  return out;
}
