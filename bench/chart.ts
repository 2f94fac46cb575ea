/**
 * The scenario-D chart: wall time against list size, one line per region
 * capacity (log-log), the lower bound of each cell dashed; right panel the
 * ratio wall / bound. Renders SVG by hand (pure `renderScalingSvg`) and
 * converts it to PNG with rsvg-convert (Debian librsvg2-bin) when present.
 *
 * Run alone: bun bench/chart.ts [results.json] -> docs/bench-e2e-scaling.png
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ChartCell {
  size: number;
  capacity: number;
  wallMs: number;
  boundMs: number;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

export function renderScalingSvg(cells: ChartCell[], title: string): string {
  const W = 1100;
  const H = 520;
  const caps = [...new Set(cells.map((c) => c.capacity))].sort((a, b) => a - b);
  const sizes = [...new Set(cells.map((c) => c.size))].sort((a, b) => a - b);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Arial, sans-serif">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="28" font-size="18" text-anchor="middle" font-weight="bold">${esc(title)}</text>`);

  // left panel: wall time, log-log
  const L = { x: 80, y: 60, w: 560, h: 380 };
  const xs = sizes.length > 1 ? sizes : [sizes[0] ?? 1000, (sizes[0] ?? 1000) * 10];
  const minX = Math.log10(Math.min(...xs)) - 0.15;
  const maxX = Math.log10(Math.max(...xs)) + 0.15;
  const vals = cells.flatMap((c) => [c.wallMs, c.boundMs]).filter((v) => v > 0);
  const minY = Math.floor(Math.log10(Math.max(50, Math.min(...vals) / 1.5)));
  const maxY = Math.ceil(Math.log10(Math.max(...vals) * 1.2));
  const px = (s: number) => L.x + ((Math.log10(s) - minX) / (maxX - minX)) * L.w;
  const py = (ms: number) => L.y + L.h - ((Math.log10(Math.max(ms, 1)) - minY) / (maxY - minY)) * L.h;
  out.push(`<rect x="${L.x}" y="${L.y}" width="${L.w}" height="${L.h}" fill="none" stroke="#333"/>`);
  for (let e = minY; e <= maxY; e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > maxY + 1e-9) continue;
      const y = py(v);
      out.push(`<line x1="${L.x}" y1="${y}" x2="${L.x + L.w}" y2="${y}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`);
      const label = v >= 1000 ? `${v / 1000} s` : `${v} ms`;
      out.push(`<text x="${L.x - 6}" y="${y + 4}" font-size="12" text-anchor="end">${label}</text>`);
    }
  }
  for (const s of sizes) {
    const x = px(s);
    out.push(`<line x1="${x}" y1="${L.y}" x2="${x}" y2="${L.y + L.h}" stroke="#eee"/>`);
    out.push(`<text x="${x}" y="${L.y + L.h + 18}" font-size="13" text-anchor="middle">${s >= 1000 ? `${s / 1000}k` : s}</text>`);
  }
  out.push(`<text x="${L.x + L.w / 2}" y="${L.y + L.h + 40}" font-size="14" text-anchor="middle">proxies in the list (log)</text>`);
  out.push(`<text x="22" y="${L.y + L.h / 2}" font-size="14" text-anchor="middle" transform="rotate(-90 22 ${L.y + L.h / 2})">wall time (log)</text>`);
  caps.forEach((cap, i) => {
    const color = COLORS[i % COLORS.length]!;
    const row = cells.filter((c) => c.capacity === cap).sort((a, b) => a.size - b.size);
    const wall = row.map((c) => `${px(c.size).toFixed(1)},${py(c.wallMs).toFixed(1)}`).join(' ');
    const bound = row.map((c) => `${px(c.size).toFixed(1)},${py(c.boundMs).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${bound}" fill="none" stroke="${color}" stroke-width="1.5" stroke-dasharray="6 4" opacity="0.8"/>`);
    out.push(`<polyline points="${wall}" fill="none" stroke="${color}" stroke-width="2.5"/>`);
    for (const c of row) out.push(`<circle cx="${px(c.size).toFixed(1)}" cy="${py(c.wallMs).toFixed(1)}" r="4" fill="${color}"/>`);
    const ly = L.y + 18 + i * 20;
    out.push(`<line x1="${L.x + 12}" y1="${ly - 4}" x2="${L.x + 40}" y2="${ly - 4}" stroke="${color}" stroke-width="2.5"/>`);
    out.push(`<text x="${L.x + 46}" y="${ly}" font-size="12">capacity ${cap}</text>`);
  });
  const ly = L.y + 18 + caps.length * 20;
  out.push(`<line x1="${L.x + 12}" y1="${ly - 4}" x2="${L.x + 40}" y2="${ly - 4}" stroke="#555" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  out.push(`<text x="${L.x + 46}" y="${ly}" font-size="12">lower bound (dashed)</text>`);

  // right panel: ratio wall / bound, grouped bars
  const R = { x: 720, y: 60, w: 340, h: 380 };
  const ratios = cells.map((c) => c.wallMs / c.boundMs);
  const maxR = Math.max(1.5, Math.ceil(Math.max(...ratios) * 4) / 4);
  const ry = (r: number) => R.y + R.h - ((r - 1) / (maxR - 1)) * R.h;
  out.push(`<rect x="${R.x}" y="${R.y}" width="${R.w}" height="${R.h}" fill="none" stroke="#333"/>`);
  for (let r = 1; r <= maxR + 1e-9; r += maxR > 3 ? 0.5 : 0.25) {
    out.push(`<line x1="${R.x}" y1="${ry(r)}" x2="${R.x + R.w}" y2="${ry(r)}" stroke="#eee"/>`);
    out.push(`<text x="${R.x - 6}" y="${ry(r) + 4}" font-size="12" text-anchor="end">${r.toFixed(2)}</text>`);
  }
  const groupW = R.w / Math.max(1, sizes.length);
  const barW = Math.min(18, (groupW - 16) / Math.max(1, caps.length));
  sizes.forEach((s, si) => {
    const gx = R.x + si * groupW + (groupW - barW * caps.length) / 2;
    caps.forEach((cap, ci) => {
      const c = cells.find((k) => k.size === s && k.capacity === cap);
      if (c === undefined) return;
      const r = c.wallMs / c.boundMs;
      const y = ry(Math.min(r, maxR));
      out.push(`<rect x="${gx + ci * barW}" y="${y}" width="${barW - 2}" height="${R.y + R.h - y}" fill="${COLORS[ci % COLORS.length]}"/>`);
    });
    out.push(`<text x="${R.x + si * groupW + groupW / 2}" y="${R.y + R.h + 18}" font-size="13" text-anchor="middle">${s >= 1000 ? `${s / 1000}k` : s}</text>`);
  });
  out.push(`<line x1="${R.x}" y1="${ry(1.05)}" x2="${R.x + R.w}" y2="${ry(1.05)}" stroke="#000" stroke-width="1.2" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${R.x + 6}" y="${R.y + 16}" font-size="12">dashed line: ratio 1.05 (target of A)</text>`);
  out.push(`<text x="${R.x + R.w / 2}" y="${R.y + R.h + 40}" font-size="14" text-anchor="middle">wall / lower bound, by list size</text>`);
  out.push(
    `<text x="${W / 2}" y="${H - 12}" font-size="12" text-anchor="middle" fill="#555">mix: 10% working (lognormal latency, median 150 ms, p90 800 ms), 50% refused, 30% black hole, 10% slow; timeout 2 s; bound = max(sum of min(own, timeout) / slots, timeout)</text>`,
  );
  out.push('</svg>');
  return out.join('\n');
}

/** Writes <png>.svg beside it and the PNG (rsvg-convert); returns the files written. */
export async function writeChart(cells: ChartCell[], title: string, pngPath: string): Promise<string[]> {
  mkdirSync(dirname(pngPath), { recursive: true });
  const svgPath = pngPath.replace(/\.png$/, '.svg');
  writeFileSync(svgPath, renderScalingSvg(cells, title));
  const rsvg = Bun.which('rsvg-convert');
  if (rsvg === null) return [svgPath];
  const p = Bun.spawn([rsvg, '-b', 'white', '-o', pngPath, svgPath], { stdout: 'ignore', stderr: 'pipe' });
  const code = await p.exited;
  if (code !== 0) throw new Error(`rsvg-convert failed: ${await new Response(p.stderr).text()}`);
  return [svgPath, pngPath];
}

if (import.meta.main) {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const file = process.argv[2] ?? join(root, 'bench/e2e/last-results.json');
  const data = JSON.parse(readFileSync(file, 'utf8')) as { scenarios: Record<string, { runs: { name: string; size: number; slots: number; wallMs: number; bound: { tightMs: number } }[] }> };
  const cells = (data.scenarios.D?.runs ?? []).map((r) => ({ size: r.size, capacity: r.slots, wallMs: r.wallMs, boundMs: r.bound.tightMs }));
  console.log(await writeChart(cells, 'Scenario D: wall time vs list size and region capacity', join(root, 'docs/bench-e2e-scaling.png')));
}
