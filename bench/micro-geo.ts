/**
 * mitata micro-benchmark: exit-IP geo lookups (src/geo/geo.ts) after load,
 * for a hot set (repeated exit IPs) and a cold, spread set of IPv4 and IPv6.
 * Run: bun bench/micro-geo.ts
 */
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { openGeo } from '../src/geo/geo';

const t0 = performance.now();
const rss0 = process.memoryUsage().rss;
const geo = await openGeo();
console.log(`geo load: ${(performance.now() - t0).toFixed(1)} ms (asn ${geo.stats.asnSource}), RSS +${((process.memoryUsage().rss - rss0) / 1048576).toFixed(1)} MiB`);

let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const v4 = Array.from({ length: 4096 }, () => `${1 + Math.floor(rnd() * 222)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`);
const v6 = Array.from({ length: 4096 }, () => `2${Math.floor(rnd() * 0xfff).toString(16).padStart(3, '0')}:${Math.floor(rnd() * 0xffff).toString(16)}::${Math.floor(rnd() * 0xffff).toString(16)}`);
const hot = v4.slice(0, 64);
let i = 0;

summary(() => {
  group('geo.lookup', () => {
    bench('8.8.8.8 (same address)', () => do_not_optimize(geo.lookup('8.8.8.8')));
    bench('IPv4, 64 hot exit IPs', () => do_not_optimize(geo.lookup(hot[i++ & 63]!)));
    bench('IPv4, 4096 spread addresses', () => do_not_optimize(geo.lookup(v4[i++ & 4095]!)));
    bench('IPv6, 4096 spread addresses', () => do_not_optimize(geo.lookup(v6[i++ & 4095]!)));
    bench('private 10.1.2.3 (unknown)', () => do_not_optimize(geo.lookup('10.1.2.3')));
  });
});

await run();
console.log(`RSS after: ${(process.memoryUsage().rss / 1048576).toFixed(1)} MiB`);
