/**
 * mitata micro-benchmark: the proxy list parser (src/proxy/parse.ts
 * parseProxyList) on 100 000-line text bodies: one realistic mix (IPv4, host
 * names, URL auth, colon auth, IPv6, schemes, comments, invalid and duplicate
 * lines, CRLF) and one body per input form. Prints mitata's table, then
 * ns per line for each case, then CPU time per line for the mix.
 *
 *   bun bench/micro-parse.ts
 */
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { parseProxyList } from '../src/proxy/parse';
import { ip, mixedLines } from './proxy-list-bodies';

const LINES = 100_000;

const lines = (f: (i: number) => string, sep = '\n') => Array.from({ length: LINES }, (_, i) => f(i)).join(sep);
const mixedBody = mixedLines(LINES).join('\r\n');

const BODIES: Record<string, string> = {
  'mixed, CRLF': mixedBody,
  'host:port': lines((i) => `${ip(i)}:${1024 + (i % 60000)}`),
  'scheme://user:pass@host:port': lines((i) => `socks5://user${i}:p%40ss@${ip(i)}:1080`),
  'host:port:user:pass': lines((i) => `${ip(i)}:8080:user${i}:pa:ss`),
  'IPv6 / hostnames / comments, CRLF': lines(
    (i) => (i % 3 === 0 ? `[2001:db8::${i.toString(16)}]:3128` : i % 3 === 1 ? `proxy${i}.example.com:80` : `# c ${i}`),
    '\r\n',
  ),
};

const mixed = parseProxyList(BODIES['mixed, CRLF'] ?? '');
console.log(
  `mixed body: ${((BODIES['mixed, CRLF'] ?? '').length / 1024 / 1024).toFixed(2)} MiB, ${LINES} lines -> ` +
    `${mixed.proxies.length} unique, ${mixed.duplicates} duplicates, ${mixed.invalid} invalid, ${mixed.ignored} ignored`,
);

summary(() => {
  group(`parseProxyList (${LINES} lines)`, () => {
    for (const [name, body] of Object.entries(BODIES)) bench(name, () => do_not_optimize(parseProxyList(body)));
  });
});

const { benchmarks } = await run();
console.log(`\nper line (${LINES} lines per call):`);
for (const trial of benchmarks) {
  for (const r of trial.runs) {
    if (!r.stats) continue;
    console.log(
      `  ${r.name}: ${(r.stats.avg / LINES).toFixed(0)} ns/line avg, ${(r.stats.min / LINES).toFixed(0)} ns/line min ` +
        `(${(r.stats.avg / 1e6).toFixed(1)} ms avg per call)`,
    );
  }
}

// CPU time (user + system, all threads incl. GC) is less sensitive than wall time to other load.
const RUNS = 20;
const body = BODIES['mixed, CRLF'] ?? '';
const cpu0 = process.cpuUsage();
for (let i = 0; i < RUNS; i++) do_not_optimize(parseProxyList(body));
const cpu = process.cpuUsage(cpu0);
console.log(`  mixed, CRLF: ${(((cpu.user + cpu.system) * 1000) / (RUNS * LINES)).toFixed(0)} ns/line CPU`);
