/**
 * bench/probe-cpu.ts across checkouts, interleaved: each round runs every
 * checkout once (a fresh process each), the order reversed every other round,
 * so a machine that gets busier moves every variant alike. For "each step
 * measured alone": one checkout per step (`git archive <commit> | tar -x -C
 * DIR`, node_modules symlinked), the step before and after it side by side.
 *
 *   bun bench/probe-cpu-ab.ts [--rounds 5] [--args "--scenarios http --n 3000 --reps 1"] label=DIR ...
 *
 * Prints each run's µs of checker CPU per probe as it comes, then the median
 * (and every run) per variant and scenario.
 */
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i !== -1 && argv[i + 1] !== undefined ? (argv.splice(i, 2)[1] as string) : dflt;
};
const rounds = Number(opt('rounds', '5'));
const args = opt('args', '--scenarios http --n 3000 --reps 1 --warmup 1000 --concurrency 64').split(/\s+/).filter(Boolean);
const variants = argv.map((v) => {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new Error(`expected label=DIR, got ${v}`);
  return { label: v.slice(0, eq), dir: v.slice(eq + 1) };
});
if (variants.length === 0) throw new Error('no variants: label=DIR ...');

interface Row {
  scenario: string;
  cpuPerProbeUs: number;
  farmCpuPerProbeUs: number;
  wallMs: number;
  tlsResumed: number | null;
  codes: Record<string, number>;
}
const results = new Map<string, Map<string, number[]>>();
for (let r = 0; r < rounds; r++) {
  for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
    const p = Bun.spawnSync([process.execPath, 'bench/probe-cpu.ts', ...args, '--json'], { cwd: v.dir, stdout: 'pipe', stderr: 'pipe' });
    const rows = p.stdout.toString().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Row);
    if (rows.length === 0) console.log(`round ${r + 1} ${v.label} FAILED: ${p.stderr.toString().slice(-2000)}`);
    for (const row of rows) {
      const byScenario = results.get(v.label) ?? new Map<string, number[]>();
      byScenario.set(row.scenario, [...(byScenario.get(row.scenario) ?? []), row.cpuPerProbeUs]);
      results.set(v.label, byScenario);
      console.log(`round ${r + 1} ${v.label.padEnd(10)} ${row.scenario.padEnd(8)} ${row.cpuPerProbeUs} µs/probe (farm ${row.farmCpuPerProbeUs}, wall ${row.wallMs} ms, tls resumed ${row.tlsResumed ?? '-'}) ${JSON.stringify(row.codes)}`);
    }
  }
  console.log(`load ${readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).join(' ')}`);
}
const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2]! : (a[a.length / 2 - 1]! + a[a.length / 2]!) / 2;
};
for (const [label, byScenario] of results) {
  for (const [scenario, xs] of byScenario) console.log(`${label.padEnd(10)} ${scenario.padEnd(8)} median ${median(xs).toFixed(0)} µs  runs ${[...xs].sort((a, b) => a - b).join(', ')}`);
}
