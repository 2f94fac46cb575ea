/**
 * The dashboard's charts as SVG markup, pure: an anonymity donut, horizontal
 * bar charts (countries, ISPs), a response-time histogram and a daily column
 * chart (30-day usage). Each chart has an accessible name (<title>), a
 * one-line description (<desc>) and a <title> per mark, so hovering or a
 * screen reader gets the numbers; colours come from CSS classes
 * (src/web/app.css), never from inline styles (the page's CSP forbids them).
 * The bar, histogram and daily charts take the width they will be drawn at
 * (CSS pixels; the view passes its container's width and redraws on resize),
 * so one SVG unit is one pixel and the text stays readable on any screen.
 */
import { compactNumber, escapeXml, formatCount, niceStep, r1 } from './svg';

export interface Slice {
  label: string;
  value: number;
  /** CSS class of the slice and its legend swatch. */
  cls: string;
}

let idSeq = 0;
/** A document-unique id prefix for aria-labelledby (pure enough: a counter). */
function uid(prefix: string): string {
  idSeq = (idSeq + 1) % 1_000_000;
  return `${prefix}-${idSeq}`;
}

function head(cls: string, w: number, h: number, title: string, desc: string): string {
  const id = uid(cls);
  return (
    `<svg class="chart ${cls}" viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${id}-t">${escapeXml(title)}</title><desc id="${id}-d">${escapeXml(desc)}</desc>`
  );
}

export function percent(part: number, total: number): string {
  if (total <= 0) return '0%';
  const p = (part / total) * 100;
  return `${Math.round(p * 10) / 10}%`;
}

function arcPath(cx: number, cy: number, R: number, r: number, a0: number, a1: number): string {
  // angles in radians, 0 = 12 o'clock, clockwise
  const pt = (rad: number, a: number) => `${r1(cx + rad * Math.sin(a))} ${r1(cy - rad * Math.cos(a))}`;
  const large = a1 - a0 > Math.PI ? 1 : 0;
  return `M${pt(R, a0)}A${R} ${R} 0 ${large} 1 ${pt(R, a1)}L${pt(r, a1)}A${r} ${r} 0 ${large} 0 ${pt(r, a0)}Z`;
}

/** A donut of the slices with the total in the middle. Zero total: an empty ring. */
export function donutChart(slices: readonly Slice[], title: string, centerLabel = 'total'): string {
  const size = 200;
  const c = size / 2;
  const R = 90;
  const r = 56;
  const total = slices.reduce((s, x) => s + Math.max(0, x.value), 0);
  const desc = total === 0 ? 'No data.' : slices.map((s) => `${s.label}: ${formatCount(s.value)} (${percent(s.value, total)})`).join('; ') + '.';
  const out = [head('donut', size, size, title, desc)];
  if (total === 0) {
    out.push(`<circle class="donut-empty" cx="${c}" cy="${c}" r="${(R + r) / 2}" fill="none" stroke-width="${R - r}"/>`);
  } else {
    let a = 0;
    for (const s of slices) {
      if (s.value <= 0) continue;
      const span = (s.value / total) * Math.PI * 2;
      const label = `${s.label}: ${formatCount(s.value)} (${percent(s.value, total)})`;
      if (span >= Math.PI * 2 - 1e-9) {
        // a full ring: two half arcs (one arc cannot start and end at the same point)
        out.push(`<path class="${escapeXml(s.cls)}" d="${arcPath(c, c, R, r, 0, Math.PI)}${arcPath(c, c, R, r, Math.PI, Math.PI * 2)}"><title>${escapeXml(label)}</title></path>`);
      } else {
        out.push(`<path class="${escapeXml(s.cls)}" d="${arcPath(c, c, R, r, a, a + span)}"><title>${escapeXml(label)}</title></path>`);
      }
      a += span;
    }
  }
  out.push(`<text class="donut-total" x="${c}" y="${c + 2}" text-anchor="middle">${formatCount(total)}</text>`);
  out.push(`<text class="donut-caption" x="${c}" y="${c + 22}" text-anchor="middle">${escapeXml(centerLabel)}</text>`);
  out.push('</svg>');
  return out.join('');
}

/** The legend of a donut as an HTML list (swatch, label, count, share). */
export function legendHtml(slices: readonly Slice[]): string {
  const total = slices.reduce((s, x) => s + Math.max(0, x.value), 0);
  const items = slices.map(
    (s) =>
      `<li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect class="${escapeXml(s.cls)}" width="10" height="10" rx="2"/></svg>` +
      `<span class="legend-label">${escapeXml(s.label)}</span> <span class="legend-value">${formatCount(s.value)} (${percent(s.value, total)})</span></li>`,
  );
  return `<ul class="legend">${items.join('')}</ul>`;
}

export interface Bar {
  label: string;
  value: number;
}

/**
 * The top `limit` items (by value, then label) and, when there are more, one
 * "Other (n)" bar with the rest.
 */
export function topWithOther(items: readonly Bar[], limit: number): Bar[] {
  const sorted = [...items].filter((b) => b.value > 0).sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
  if (sorted.length <= limit) return sorted;
  const rest = sorted.slice(limit);
  return [...sorted.slice(0, limit), { label: `Other (${rest.length})`, value: rest.reduce((s, b) => s + b.value, 0) }];
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** A drawing width in CSS pixels: at least 240, a whole number; 420 when unknown. */
export function chartWidth(px: number | undefined): number {
  return px !== undefined && Number.isFinite(px) && px > 0 ? Math.max(240, Math.floor(px)) : 420;
}

/** Horizontal bars, one row each, label left and value right, `width` pixels wide. */
export function barChart(bars: readonly Bar[], title: string, width?: number): string {
  const w = chartWidth(width);
  const rowH = 26;
  const labelW = Math.min(170, Math.round(w * 0.36));
  const valueW = 56;
  const barW = w - labelW - valueW;
  const h = Math.max(1, bars.length) * rowH + 4;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const desc = bars.length === 0 ? 'No data.' : bars.map((b) => `${b.label}: ${formatCount(b.value)}`).join('; ') + '.';
  const out = [head('bars', w, h, title, desc)];
  if (bars.length === 0) out.push(`<text class="chart-empty" x="${w / 2}" y="${rowH / 2 + 5}" text-anchor="middle">No data</text>`);
  bars.forEach((b, i) => {
    const y = i * rowH + 4;
    const len = Math.max(b.value > 0 ? 2 : 0, r1((b.value / max) * barW));
    out.push(
      `<g class="bar-row"><title>${escapeXml(`${b.label}: ${formatCount(b.value)}`)}</title>` +
        `<text class="bar-label" x="${labelW - 8}" y="${y + 15}" text-anchor="end">${escapeXml(truncate(b.label, Math.max(6, Math.floor((labelW - 12) / 7.8))))}</text>` +
        `<rect class="bar" x="${labelW}" y="${y + 3}" width="${len}" height="${rowH - 8}" rx="2"/>` +
        `<text class="bar-value" x="${labelW + len + 6}" y="${y + 15}">${formatCount(b.value)}</text></g>`,
    );
  });
  out.push('</svg>');
  return out.join('');
}

export interface Bin {
  from: number;
  to: number;
  count: number;
}

/**
 * Equal-width bins with a "nice" width (1/2/5 x 10^k) covering all finite
 * values, about `target` of them. Empty input: no bins. All equal: one bin.
 */
export function histogramBins(values: readonly number[], target = 10): Bin[] {
  const xs = values.filter((v) => Number.isFinite(v));
  if (xs.length === 0) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const v of xs) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const bins = Math.max(1, Math.floor(target));
  let step = max === min ? niceStep(Math.max(1, Math.abs(max) / 10)) : niceStep((max - min) / bins);
  let start = Math.floor(min / step) * step;
  let n = Math.floor((max - start) / step) + 1;
  if (!(step > 0) || !Number.isFinite(n) || n < 1 || n > bins * 4 + 2) {
    // a range too small for floating point (denormals): one bin holding everything
    step = Math.max(max - min, Number.MIN_VALUE);
    start = min;
    n = 1;
  }
  const out: Bin[] = Array.from({ length: n }, (_, i) => ({ from: start + i * step, to: i === n - 1 ? Math.max(max, start + (i + 1) * step) : start + (i + 1) * step, count: 0 }));
  for (const v of xs) {
    const i = Math.min(n - 1, Math.max(0, Math.floor((v - start) / step)));
    out[i]!.count++;
  }
  return out;
}

/** Vertical bars of the bins with bin-edge labels under the axis (`unit` after the last), `width` pixels wide. */
export function histogramChart(bins: readonly Bin[], title: string, unit = 'ms', width?: number): string {
  const w = chartWidth(width);
  const h = 200;
  const left = 36;
  const bottom = 28;
  const top = 10;
  const plotW = w - left - 8;
  const plotH = h - top - bottom;
  const total = bins.reduce((s, b) => s + b.count, 0);
  const max = Math.max(1, ...bins.map((b) => b.count));
  const desc =
    bins.length === 0
      ? 'No data.'
      : `${formatCount(total)} values from ${compactNumber(bins[0]!.from)} to ${compactNumber(bins.at(-1)!.to)} ${unit}; ` +
        `the fullest bin is ${compactNumber(bins.reduce((a, b) => (b.count > a.count ? b : a)).from)}–${compactNumber(bins.reduce((a, b) => (b.count > a.count ? b : a)).to)} ${unit}.`;
  const out = [head('histogram', w, h, title, desc)];
  out.push(`<line class="axis" x1="${left}" y1="${top + plotH}" x2="${w - 8}" y2="${top + plotH}"/>`);
  out.push(`<text class="axis-label" x="${left - 4}" y="${top + 8}" text-anchor="end">${compactNumber(max)}</text>`);
  out.push(`<text class="axis-label" x="${left - 4}" y="${top + plotH}" text-anchor="end">0</text>`);
  if (bins.length === 0) out.push(`<text class="chart-empty" x="${left + plotW / 2}" y="${top + plotH / 2}" text-anchor="middle">No data</text>`);
  const bw = bins.length > 0 ? plotW / bins.length : plotW;
  bins.forEach((b, i) => {
    const bh = r1((b.count / max) * plotH);
    const x = r1(left + i * bw);
    out.push(
      `<rect class="bar" x="${r1(x + 1)}" y="${r1(top + plotH - bh)}" width="${r1(Math.max(1, bw - 2))}" height="${bh}">` +
        `<title>${escapeXml(`${compactNumber(b.from)}–${compactNumber(b.to)} ${unit}: ${formatCount(b.count)}`)}</title></rect>`,
    );
  });
  // edge labels: about one per 70 px, on a regular grid of edges; the unit goes after the last one drawn
  const edges = bins.length;
  const every = Math.max(1, Math.ceil(70 / Math.max(1, bw)));
  const shown: number[] = [];
  for (let e = 0; e <= edges && edges > 0; e += every) shown.push(e);
  shown.forEach((e, k) => {
    const value = e < edges ? bins[e]!.from : bins[edges - 1]!.to;
    const last = k === shown.length - 1;
    const anchor = e === edges ? 'end' : e === 0 ? 'start' : 'middle';
    out.push(`<text class="axis-label" x="${r1(left + e * bw)}" y="${h - 10}" text-anchor="${anchor}">${compactNumber(value)}${last ? ` ${escapeXml(unit)}` : ''}</text>`);
  });
  out.push('</svg>');
  return out.join('');
}

export interface DayValue {
  day: string;
  value: number;
}

/** One column per day (oldest left), dates under the axis about every 80 px and the last day; `width` pixels wide. */
export function dailyChart(days: readonly DayValue[], title: string, unit = 'checks', width?: number): string {
  const w = chartWidth(width ?? 600);
  const h = 180;
  const left = 40;
  const bottom = 28;
  const top = 10;
  const plotW = w - left - 8;
  const plotH = h - top - bottom;
  const max = Math.max(1, ...days.map((d) => d.value));
  const total = days.reduce((s, d) => s + d.value, 0);
  const desc = days.length === 0 ? 'No data.' : `${formatCount(total)} ${unit} over ${days.length} days, at most ${formatCount(max)} a day.`;
  const out = [head('daily', w, h, title, desc)];
  out.push(`<line class="axis" x1="${left}" y1="${top + plotH}" x2="${w - 8}" y2="${top + plotH}"/>`);
  out.push(`<text class="axis-label" x="${left - 4}" y="${top + 8}" text-anchor="end">${compactNumber(max)}</text>`);
  out.push(`<text class="axis-label" x="${left - 4}" y="${top + plotH}" text-anchor="end">0</text>`);
  const bw = days.length > 0 ? plotW / days.length : plotW;
  const every = Math.max(1, Math.ceil(80 / Math.max(1, bw)));
  const one = (n: number) => (n === 1 && unit.endsWith('s') ? unit.slice(0, -1) : unit);
  days.forEach((d, i) => {
    const bh = r1((d.value / max) * plotH);
    const x = r1(left + i * bw);
    out.push(
      `<rect class="bar" x="${r1(x + 1)}" y="${r1(top + plotH - Math.max(bh, d.value > 0 ? 1 : 0))}" width="${r1(Math.max(1, bw - 2))}" height="${Math.max(bh, d.value > 0 ? 1 : 0)}">` +
        `<title>${escapeXml(`${d.day}: ${formatCount(d.value)} ${one(d.value)}`)}</title></rect>`,
    );
    const lastDay = i === days.length - 1;
    if ((i % every === 0 && (days.length - 1 - i) * bw >= 60) || lastDay) {
      const lx = lastDay ? r1(x + bw) : r1(x + bw / 2);
      out.push(`<text class="axis-label" x="${lx}" y="${h - 10}" text-anchor="${lastDay ? 'end' : 'middle'}">${escapeXml(d.day.slice(5))}</text>`);
    }
  });
  out.push('</svg>');
  return out.join('');
}
