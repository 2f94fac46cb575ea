/**
 * The dashboard's SVG charts (src/web/client/charts.ts) and helpers
 * (src/web/client/svg.ts): donut slices and legend, bars with "Other",
 * histogram binning (fuzzed: every value in exactly one bin), the 30-day
 * column chart, escaping and number formats.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { barChart, dailyChart, donutChart, histogramBins, histogramChart, legendHtml, percent, topWithOther } from '../../src/web/client/charts';
import { compactNumber, escapeXml, formatCount, niceStep } from '../../src/web/client/svg';

const slices = (e: number, a: number, t: number) => [
  { label: 'Elite', value: e, cls: 'c-elite' },
  { label: 'Anonymous', value: a, cls: 'c-anonymous' },
  { label: 'Transparent', value: t, cls: 'c-transparent' },
];

describe('svg helpers', () => {
  test('escapeXml escapes the five markup characters', () => {
    expect(escapeXml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
  test('formatCount groups thousands; compactNumber shortens', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount(-1000)).toBe('-1,000');
    expect(compactNumber(950)).toBe('950');
    expect(compactNumber(1500)).toBe('1.5k');
    expect(compactNumber(2_000_000)).toBe('2M');
  });
  test('niceStep is the smallest 1/2/5 x 10^k not below its input', () => {
    expect([0.3, 1, 1.1, 3, 7, 12, 450].map(niceStep)).toEqual([0.5, 1, 2, 5, 10, 20, 500]);
    expect(niceStep(0)).toBe(1);
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e9, noNaN: true }), (x) => {
        const s = niceStep(x);
        expect(s).toBeGreaterThanOrEqual(x * (1 - 1e-9));
        expect(s).toBeLessThanOrEqual(x * 5);
      }),
    );
  });
  test('percent', () => {
    expect(percent(1, 3)).toBe('33.3%');
    expect(percent(0, 0)).toBe('0%');
  });
});

describe('donutChart', () => {
  test('one path per non-zero slice with its share in the title; total in the middle', () => {
    const svg = donutChart(slices(2, 1, 1), 'Anonymity');
    expect(svg.match(/<path /g)).toHaveLength(3);
    expect(svg).toContain('<title>Elite: 2 (50%)</title>');
    expect(svg).toContain('Transparent: 1 (25%)');
    expect(svg).toMatch(/class="donut-total"[^>]*>4</);
    expect(svg).toContain('role="img"');
  });
  test('a single 100% slice is drawn as a full ring; zero total is an empty ring', () => {
    const full = donutChart(slices(5, 0, 0), 'A');
    expect(full.match(/<path /g)).toHaveLength(1);
    expect(full.match(/A90 90/g)!.length).toBe(2);
    const empty = donutChart(slices(0, 0, 0), 'A');
    expect(empty).toContain('donut-empty');
    expect(empty).toContain('No data.');
    expect(empty).not.toContain('<path');
  });
  test('legend lists every slice with count and share', () => {
    const html = legendHtml(slices(3, 1, 0));
    expect(html.match(/<li>/g)).toHaveLength(3);
    expect(html).toContain('3 (75%)');
    expect(html).toContain('0 (0%)');
  });
});

describe('bars', () => {
  test('topWithOther keeps the largest and sums the rest', () => {
    const items = [
      { label: 'b', value: 5 },
      { label: 'a', value: 5 },
      { label: 'c', value: 1 },
      { label: 'd', value: 2 },
      { label: 'zero', value: 0 },
    ];
    expect(topWithOther(items, 2)).toEqual([
      { label: 'a', value: 5 },
      { label: 'b', value: 5 },
      { label: 'Other (2)', value: 3 },
    ]);
    expect(topWithOther(items, 10)).toHaveLength(4);
  });
  test('barChart: a row per bar, labels escaped and truncated, empty input says so', () => {
    const svg = barChart(
      [
        { label: 'Germany', value: 10 },
        { label: '<script>x</script> a very long country name', value: 3 },
      ],
      'Countries',
    );
    expect(svg.match(/class="bar-row"/g)).toHaveLength(2);
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('…');
    expect(barChart([], 'Countries')).toContain('No data');
  });
});

describe('histogram', () => {
  test('nice bins over the range', () => {
    const bins = histogramBins([1, 12, 19, 33, 99], 10);
    expect(bins[0]!.from).toBe(0);
    expect(bins[1]!.from - bins[0]!.from).toBe(10);
    expect(bins.reduce((s, b) => s + b.count, 0)).toBe(5);
    expect(bins.at(-1)!.to).toBe(100);
  });
  test('a denormal range still gives finite bins holding every value (fuzz found [0, 5e-324])', () => {
    const bins = histogramBins([0, 5e-324], 1);
    expect(bins.length).toBeGreaterThanOrEqual(1);
    expect(bins.length).toBeLessThanOrEqual(2);
    expect(bins.reduce((s, b) => s + b.count, 0)).toBe(2);
    expect(bins.every((b) => Number.isFinite(b.from) && Number.isFinite(b.to) && b.to > b.from)).toBe(true);
    expect(niceStep(5e-324)).toBe(5e-324);
  });
  test('empty input has no bins; equal values one bin', () => {
    expect(histogramBins([])).toEqual([]);
    expect(histogramBins([Number.NaN])).toEqual([]);
    const one = histogramBins([42, 42, 42]);
    expect(one).toHaveLength(1);
    expect(one[0]!.count).toBe(3);
  });
  test('every finite value lands in exactly one bin whose range holds it', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double({ min: 0, max: 20000, noNaN: true }), fc.double({ min: 0, max: 1e-300, noNaN: true })), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 30 }), (xs, target) => {
        const bins = histogramBins(xs, target);
        expect(bins.reduce((s, b) => s + b.count, 0)).toBe(xs.length);
        expect(bins.length).toBeLessThanOrEqual(target * 3 + 2);
        for (const x of xs) expect(x).toBeGreaterThanOrEqual(bins[0]!.from);
        expect(Math.max(...xs)).toBeLessThanOrEqual(bins.at(-1)!.to);
      }),
    );
  });
  test('chart: one rect per bin with its range in the title', () => {
    const svg = histogramChart(histogramBins([5, 15, 15], 1), 'Response time');
    expect(svg.match(/<rect class="bar"/g)!.length).toBe(2);
    expect(svg).toContain('10–20 ms: 2');
    expect(histogramChart([], 'x')).toContain('No data');
  });
});

describe('dailyChart', () => {
  test('30 columns, a title per day, date labels every 5th day (at 600 px) and the last', () => {
    const days = Array.from({ length: 30 }, (_, i) => ({ day: `2026-05-${String(i + 1).padStart(2, '0')}`, value: i === 29 ? 120 : i }));
    const svg = dailyChart(days, 'Usage');
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(30);
    expect(svg).toContain('<title>2026-05-30: 120 checks</title>');
    expect(svg.match(/class="axis-label" x="[\d.]+" y="\d+" text-anchor="middle">05-\d\d</g)).toHaveLength(6);
    expect(svg).toMatch(/text-anchor="end">05-30</); // the last day, flush with the right edge
    expect(svg).toContain('<title>2026-05-02: 1 check</title>');
    expect(svg).toContain('526 checks over 30 days, at most 120 a day.');
  });
  test('the drawing width follows the container: narrower screens get fewer date labels', () => {
    const days = Array.from({ length: 30 }, (_, i) => ({ day: `2026-05-${String(i + 1).padStart(2, '0')}`, value: 1 }));
    const wide = dailyChart(days, 'Usage', 'checks', 1100);
    const narrow = dailyChart(days, 'Usage', 'checks', 300);
    expect(wide).toContain('viewBox="0 0 1100 180"');
    expect(narrow).toContain('viewBox="0 0 300 180"');
    const labels = (svg: string) => svg.match(/>05-\d\d</g)!.length;
    expect(labels(narrow)).toBeLessThan(labels(wide));
    expect(dailyChart(days, 'Usage', 'checks', 10)).toContain('viewBox="0 0 240 180"'); // a floor
  });
});
