/** src/jobs/shards.ts: grants -> shards (pure). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { CustomUrlRule, ProbeSettings } from '../../src/probe/types';
import { probeShard, probeShardOf, probeTarget, splitBySettings, urlShards } from '../../src/jobs/shards';

const settings = { type: 'http' } as ProbeSettings;
const proxies = Array.from({ length: 20 }, (_, i) => ({ host: `10.0.0.${i}`, port: 8000 + i, ...(i % 5 === 0 ? { username: 'u', password: 'p' } : {}) }));
const rule = (url: string): CustomUrlRule => ({ url, requiredStatusCodes: [200], caseSensitive: false });

describe('shards', () => {
  test('probeTarget keeps credentials only with a username', () => {
    expect(probeTarget({ host: 'h', port: 1 })).toEqual({ host: 'h', port: 1 });
    expect(probeTarget({ host: 'h', port: 1, username: 'u' })).toEqual({ host: 'h', port: 1, username: 'u', password: '' });
  });

  test('probeShard: list entries [from, end) with their indices and the job settings', () => {
    const s = probeShard(proxies, 3, 7, settings);
    expect(s.kind).toBe('probe');
    expect(s.settings).toBe(settings);
    expect(s.tasks.map((t) => t.index)).toEqual([3, 4, 5, 6]);
    expect(s.tasks[2]!.proxy).toEqual({ host: '10.0.0.5', port: 8005, username: 'u', password: 'p' });
  });

  test('sampled: task t probes proxy floor(t / samples); retried tasks keep their numbers', () => {
    const s = probeShard(proxies, 4, 10, settings, 3);
    expect(s.tasks.map((t) => [t.index, t.proxy.port])).toEqual([[4, 8001], [5, 8001], [6, 8002], [7, 8002], [8, 8002], [9, 8003]]);
    const again = probeShardOf(proxies, [59, 0, 13], settings, 3);
    expect(again.tasks.map((t) => [t.index, t.proxy.port])).toEqual([[59, 8019], [0, 8000], [13, 8004]]);
    expect(again.tasks[1]!.proxy).toEqual({ host: '10.0.0.0', port: 8000, username: 'u', password: 'p' });
  });

  test('splitBySettings: one shard per settings object, every task once, in the order first met', () => {
    const socks5 = { type: 'socks5' } as ProbeSettings;
    const socks4 = { type: 'socks4' } as ProbeSettings;
    const shard = probeShard(proxies, 0, 10, settings);
    expect(splitBySettings(shard, () => settings)).toEqual([shard]);
    expect(splitBySettings(shard, () => settings)[0]).toBe(shard);
    const parts = splitBySettings(shard, (t) => (t % 3 === 0 ? socks5 : t % 3 === 1 ? settings : socks4));
    expect(parts.map((p) => p.settings)).toEqual([socks5, settings, socks4]);
    expect(parts.map((p) => p.tasks.map((t) => t.index))).toEqual([[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]);
    const all = splitBySettings(shard, () => socks5);
    expect(all.length).toBe(1);
    expect(all[0]!.settings).toBe(socks5);
    expect(all[0]!.tasks).toEqual(shard.tasks);
  });

  test('urlShards: every pair exactly once across any split of the grants, one rule per shard', () => {
    const working = [1, 4, 9, 12, 17];
    const rules = [rule('http://a/'), rule('http://b/'), rule('http://c/')];
    const total = working.length * rules.length;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }), (grants) => {
        const seen = new Set<string>();
        let p = 0;
        for (const g of grants) {
          if (p >= total) break;
          const end = Math.min(total, p + g);
          for (const { shard, urlIndex } of urlShards(proxies, working, rules, p, end, settings)) {
            expect(shard.kind).toBe('custom_url');
            if (shard.kind !== 'custom_url') continue;
            expect(shard.rules).toEqual([rules[urlIndex]!]);
            for (const t of shard.tasks) {
              const key = `${t.index}/${urlIndex}`;
              expect(seen.has(key)).toBe(false);
              seen.add(key);
            }
          }
          p = end;
        }
        if (p >= total) expect(seen.size).toBe(total);
      }),
    );
  });

  test('urlShards, auto jobs: settings per proxy index; one shard per (rule, settings), each task with its own settings', () => {
    const working = [1, 4, 9, 12, 17];
    const rules = [rule('http://a/'), rule('http://b/')];
    const socks5 = { ...settings, type: 'socks5' as const };
    const http = { ...settings, type: 'http' as const };
    const of = (i: number) => (i % 2 === 0 ? socks5 : http);
    const shards = urlShards(proxies, working, rules, 3, 8, of); // pairs 3,4 of rule 0; 5..7 of rule 1
    const seen: string[] = [];
    for (const { shard, urlIndex } of shards) {
      if (shard.kind !== 'custom_url') throw new Error('not a url shard');
      for (const t of shard.tasks) {
        expect(shard.settings).toBe(of(t.index));
        seen.push(`${t.index}/${urlIndex}`);
      }
    }
    expect(seen.sort()).toEqual(['1/1', '12/0', '17/0', '4/1', '9/1'].sort());
    expect(shards.map((s) => s.urlIndex)).toEqual([0, 0, 1, 1]); // rule 0: 12 (socks5), 17 (http); rule 1: 1, 9 (http), 4 (socks5)
    // one settings object for every pair: one shard per rule, as before
    expect(urlShards(proxies, working, rules, 0, 10, () => settings).length).toBe(2);
  });
});
