/**
 * The scenario-D chart's SVG (bench/chart.ts renderScalingSvg, pure): a whole
 * SVG document with an escaped title, log-scale x positions (decades equally
 * spaced), higher wall drawn higher, one bar per cell whose height is
 * proportional to wall / bound - 1, legends in capacity order, and no NaN
 * for one size, missing cells or no cells at all.
 */
import { describe, expect, test } from 'bun:test';
import { type ChartCell, renderScalingSvg } from '../../bench/chart';

const SIZES = [1_000, 10_000, 100_000];
const CAPS = [256, 1_024, 4_096];

function grid(): ChartCell[] {
  const out: ChartCell[] = [];
  for (const size of SIZES) {
    for (const capacity of CAPS) {
      const boundMs = 2000 + (size * 800) / capacity;
      out.push({ size, capacity, boundMs, wallMs: boundMs * (1 + capacity / 8192) });
    }
  }
  return out;
}

const attr = (tag: string, name: string) => Number(new RegExp(`\\b${name}="([^"]+)"`).exec(tag)![1]);
const tags = (svg: string, re: RegExp): string[] => [...(svg.match(re) ?? [])];

describe('renderScalingSvg', () => {
  test('a whole SVG document, title escaped, no NaN / Infinity / undefined', () => {
    const svg = renderScalingSvg(grid(), 'Wall & bound <D>');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.endsWith('</svg>')).toBe(true);
    expect(svg).toContain('>Wall &amp; bound &lt;D></text>');
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  test('x axis is logarithmic: decade sizes are equally spaced and labelled', () => {
    const svg = renderScalingSvg(grid(), 't');
    const labels = tags(svg, /<text [^>]*font-size="13"[^>]*>[^<]*<\/text>/g).slice(0, 3);
    expect(labels.map((l) => />([^<]*)</.exec(l)![1])).toEqual(['1k', '10k', '100k']);
    const xs = labels.map((l) => attr(l, 'x'));
    expect(xs[1]! - xs[0]!).toBeCloseTo(xs[2]! - xs[1]!, 6);
    expect(xs[1]! - xs[0]!).toBeGreaterThan(0);
  });

  test('one point per cell; a longer wall is drawn higher (smaller y)', () => {
    const cells = grid();
    const svg = renderScalingSvg(cells, 't');
    const circles = tags(svg, /<circle [^>]*\/>/g);
    expect(circles.length).toBe(cells.length);
    // circles are emitted per capacity (ascending), sizes ascending inside; walls grow with size
    for (let c = 0; c < CAPS.length; c++) {
      const ys = circles.slice(c * SIZES.length, (c + 1) * SIZES.length).map((t) => attr(t, 'cy'));
      expect(ys[0]!).toBeGreaterThan(ys[1]!);
      expect(ys[1]!).toBeGreaterThan(ys[2]!);
    }
    // legend in capacity order, one wall and one bound line per capacity
    expect(tags(svg, /capacity \d+/g)).toEqual(CAPS.map((c) => `capacity ${c}`));
    expect(tags(svg, /<polyline /g).length).toBe(2 * CAPS.length);
  });

  test('ratio bars: one per cell, height proportional to wall / bound - 1', () => {
    const cells: ChartCell[] = [
      { size: 1000, capacity: 256, wallMs: 2100, boundMs: 2000 },
      { size: 1000, capacity: 1024, wallMs: 2400, boundMs: 2000 },
      { size: 10_000, capacity: 256, wallMs: 3000, boundMs: 2000 },
    ];
    const svg = renderScalingSvg(cells, 't');
    const bars = tags(svg, /<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="#[0-9a-f]{6}"\/>/g);
    expect(bars.length).toBe(3);
    const h = bars.map((b) => attr(b, 'height'));
    // ratios 1.05, 1.2, 1.5 -> heights in proportion 0.05 : 0.2 : 0.5; maxR = 1.5 fills the panel (380)
    expect(h[2]!).toBeCloseTo(380, 6);
    expect(h[0]! / h[2]!).toBeCloseTo(0.1, 6);
    expect(h[1]! / h[2]!).toBeCloseTo(0.4, 6);
    // the 10k group has no 1024 bar: a missing cell is skipped
    expect(bars.every((b) => attr(b, 'y') + attr(b, 'height') === 440)).toBe(true);
  });

  test('one size, or no cells at all, still renders without NaN', () => {
    const one = renderScalingSvg([{ size: 5000, capacity: 1024, wallMs: 2500, boundMs: 2000 }], 'one');
    expect(one).not.toMatch(/NaN|Infinity|undefined/);
    expect(tags(one, /<circle /g).length).toBe(1);
    const none = renderScalingSvg([], 'none');
    expect(none).not.toMatch(/NaN|Infinity|undefined/);
    expect(none.endsWith('</svg>')).toBe(true);
  });
});
