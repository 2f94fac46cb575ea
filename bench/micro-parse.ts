/**
 * Micro-benchmark: parseProxyList on a 100 000-line text body (mixed forms:
 * IPv4, host names, URL auth, colon auth, IPv6, schemes, comments, some
 * invalid and duplicate lines). Prints mitata's table, then ns per line.
 *
 *   npx bun bench/micro-parse.ts
 */
import { bench, do_not_optimize, run } from 'mitata';
import { parseProxyList } from '../src/proxy/parse';

const LINES = 100_000;

function makeBody(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = (i >>> 16) & 255;
    const b = (i >>> 8) & 255;
    const c = i & 255;
    const port = 1024 + (i % 60000);
    switch (i % 10) {
      case 0:
        out.push(`socks5://10.${a}.${b}.${c}:${port}`);
        break;
      case 1:
        out.push(`user${i}:p%40ss${i}@proxy-${i}.example.com:${port}`);
        break;
      case 2:
        out.push(`10.${a}.${b}.${c}:${port}:user${i}:secret:${i}`);
        break;
      case 3:
        out.push(`[2001:db8::${(i & 0xffff).toString(16)}]:${port}`);
        break;
      case 4:
        out.push(i % 20 === 4 ? '# comment line' : `  Proxy${i}.Example.NET:${port}/  `);
        break;
      case 5:
        out.push(i % 50 === 5 ? 'not a proxy' : `172.${a}.${b}.${c}:${port}`);
        break;
      case 6:
        out.push(out[out.length - 6] ?? '1.1.1.1:80'); // duplicate
        break;
      default:
        out.push(`192.${a}.${b}.${c}:${port}`);
    }
  }
  return out.join('\r\n');
}

const body = makeBody(LINES);
const check = parseProxyList(body);
console.log(
  `body ${(body.length / 1024 / 1024).toFixed(2)} MiB, ${LINES} lines: ${check.proxies.length} unique, ` +
    `${check.duplicates} duplicates, ${check.invalid} invalid, ${check.ignored} ignored`,
);

bench(`parseProxyList(${LINES} lines)`, () => do_not_optimize(parseProxyList(body)));

const { benchmarks } = await run();
for (const trial of benchmarks) {
  for (const r of trial.runs) {
    if (r.stats) console.log(`${r.name}: ${(r.stats.avg / LINES).toFixed(1)} ns/line (avg ${(r.stats.avg / 1e6).toFixed(2)} ms)`);
  }
}
