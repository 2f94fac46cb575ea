/**
 * Small pure helpers shared by the dashboard's SVG and HTML builders:
 * escaping text for markup, compact number formatting, "nice" axis steps.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for use in XML/HTML content and double- or single-quoted attributes. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** 1234567 -> "1,234,567" (en-US grouping, no locale lookup). */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '0';
  const sign = n < 0 ? '-' : '';
  const s = String(Math.round(Math.abs(n)));
  return sign + s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Compact label for an axis: 950 -> "950", 1500 -> "1.5k", 2000000 -> "2M". */
export function compactNumber(n: number): string {
  const a = Math.abs(n);
  const trim = (x: number) => String(Math.round(x * 10) / 10);
  if (a >= 1e6) return `${trim(n / 1e6)}M`;
  if (a >= 1e3) return `${trim(n / 1e3)}k`;
  return trim(n);
}

/**
 * The smallest 1, 2 or 5 x 10^k that is >= raw (raw > 0); 1 for anything
 * else; raw itself when 10^k underflows (denormal input).
 */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const exp = Math.floor(Math.log10(raw));
  const base = 10 ** exp;
  if (!(base > 0) || !Number.isFinite(base)) return raw;
  for (const m of [1, 2, 5, 10]) {
    if (m * base >= raw * (1 - 1e-12)) return m * base;
  }
  return 10 * base;
}

/** Rounds to one decimal place (for compact SVG coordinates). */
export function r1(x: number): number {
  return Math.round(x * 10) / 10;
}
