/**
 * The results view's summary cards, pure: a result file's summary and
 * metadata (and the lying count of its records) -> [label, value, class]
 * items. Working, region (on one machine: its code and that this machine
 * probed it, not a city it never left from; service-info.ts), type,
 * timeout, time taken and the skipped lines as before; then "Lying proxies" (records failed with `tampered` or
 * `tls_intercepted`) whenever the records were read; "Protocols" for a type
 * auto check (summary.protocols) and "Rotating" for a sampled one
 * (summary.rotating), only when the summary has them.
 */
import { regionCard, UNKNOWN_SERVICE, type ServiceInfo } from './service-info';
import { formatCount } from './svg';

export interface CardSource {
  summary?: {
    total_working?: number;
    protocols?: Record<string, number>;
    rotating?: number;
  };
  metadata?: Record<string, unknown>;
  proxies?: unknown[];
}

export interface Card {
  label: string;
  value: string;
  /** extra class of the card ('alert' for a non-zero lying count) */
  cls?: string;
}

const PROTOCOL_NAMES: [string, string][] = [
  ['http', 'HTTP'],
  ['socks4', 'SOCKS4'],
  ['socks5', 'SOCKS5'],
];

/** `lying`: the count of lying records, or null when the records could not be read (no card then). */
export function summaryCards(file: CardSource, lying: number | null, info: ServiceInfo = UNKNOWN_SERVICE): Card[] {
  const m = file.metadata ?? {};
  const working = file.summary?.total_working ?? 0;
  const total = typeof m.total_checked === 'number' ? m.total_checked : (file.proxies?.length ?? 0);
  const items: Card[] = [
    { label: 'Working', value: `${formatCount(working)} of ${formatCount(total)}` },
    { label: 'Region', value: regionCard(m, info) },
    { label: 'Type', value: String(m.proxy_type ?? '—').toUpperCase() },
    { label: 'Timeout', value: String(m.timeout_used ?? '—') },
    { label: 'Took', value: String(m.processing_time ?? '—') },
  ];
  const skipped = (typeof m.total_invalid === 'number' ? m.total_invalid : 0) + (typeof m.total_duplicates === 'number' ? m.total_duplicates : 0);
  if (skipped > 0) items.push({ label: 'Skipped', value: `${formatCount(Number(m.total_invalid ?? 0))} invalid, ${formatCount(Number(m.total_duplicates ?? 0))} duplicate` });
  const p = file.summary?.protocols;
  if (p !== undefined && p !== null && typeof p === 'object') {
    items.push({ label: 'Protocols', value: PROTOCOL_NAMES.map(([k, name]) => `${name} ${formatCount(typeof p[k] === 'number' ? p[k] : 0)}`).join(' · ') });
  }
  const rotating = file.summary?.rotating;
  if (typeof rotating === 'number') items.push({ label: 'Rotating', value: `${formatCount(rotating)} of ${formatCount(working)} working` });
  if (lying !== null) items.push(lying > 0 ? { label: 'Lying proxies', value: formatCount(lying), cls: 'alert' } : { label: 'Lying proxies', value: '0' });
  return items;
}
