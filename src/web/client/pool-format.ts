/**
 * Pure helpers of the dashboard's Pools page (pools-view.ts is the DOM side):
 * the create form's values -> the POST /pools body (or a message naming the
 * field), the proxies listing's filters -> its query string, the rows of the
 * pools table and of a pool's proxies table as escaped markup, the summary
 * cards, the warnings of a create / PATCH answer (`balance_runs_out`), the
 * gateway's URLs for a pool (src/gateway/urls.ts, shared with the CLI), and
 * the small texts (state, interval, uptime, "5 min ago"). The shapes are
 * the API's (docs/API.md "Pools"), declared here as the page reads them
 * (the browser bundle imports only the pure modules it shares with the
 * service).
 */
import { gatewayUrls, type GatewayUrls } from '../../gateway/urls';
import { parseProxyList } from './format';
import { escapeXml, formatCount } from './svg';
import type { PoolBody, PoolProxyBody } from '../../contract/types';

/** The pool object and the pool proxy object: the contract's (src/contract/pools.ts), types only. */
export type PoolView = PoolBody;
export type PoolProxyView = PoolProxyBody;

// ---- texts ----------------------------------------------------------------------------------

export function stateText(p: Pick<PoolView, 'state' | 'paused_reason'>): string {
  if (p.state === 'active') return 'Active';
  return p.paused_reason === 'insufficient_checks' ? 'Paused: not enough checks' : 'Paused';
}

/** 45 -> "45 s", 600 -> "10 min", 5400 -> "1.5 h", 86400 -> "1 day". */
export function intervalText(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round((s / 60) * 10) / 10} min`;
  if (s < 86_400) return `${Math.round((s / 3600) * 10) / 10} h`;
  const d = Math.round((s / 86_400) * 10) / 10;
  return `${d} ${d === 1 ? 'day' : 'days'}`;
}

/** A time relative to now: "in 4 min", "now", "5 min ago"; "—" for none. */
export function relativeTime(iso: string | null, nowMs: number): string {
  if (iso === null) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const s = Math.round((t - nowMs) / 1000);
  const a = Math.abs(s);
  const span = a < 60 ? `${a} s` : a < 3600 ? `${Math.round(a / 60)} min` : a < 86_400 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86_400)} d`;
  if (a < 1) return 'now';
  return s > 0 ? `in ${span}` : `${span} ago`;
}

/** When the next check is: "in 4 min", "due now" (due or overdue: the next round takes it), "—" for none. */
export function dueText(iso: string | null, nowMs: number): string {
  if (iso === null) return '—';
  return Date.parse(iso) <= nowMs + 500 ? 'due now' : relativeTime(iso, nowMs);
}

/** 0.961 -> "96.1%"; null -> "—". */
export function uptimeText(x: number | null): string {
  return x === null ? '—' : `${(Math.round(x * 1000) / 10).toFixed(1)}%`;
}

// ---- the create form ------------------------------------------------------------------------

export interface PoolFormValues {
  name: string;
  proxies: string;
  type: string;
  region: string;
  interval: string;
  timeout: string;
}

/** The form -> the POST /pools body, or the first problem and the field it is in. */
export function poolCreateBody(v: PoolFormValues): { body: Record<string, unknown> } | { error: string; field: keyof PoolFormValues } {
  const name = v.name.trim();
  if (name === '') return { error: 'Give the pool a name.', field: 'name' };
  if (name.length > 100) return { error: 'The name may be at most 100 characters.', field: 'name' };
  const proxies = parseProxyList(v.proxies);
  if (proxies.length === 0) return { error: 'Paste at least one proxy, one per line.', field: 'proxies' };
  const interval = v.interval.trim();
  if (!/^\d+$/.test(interval) || Number(interval) < 1 || Number(interval) > 86_400) return { error: 'The interval is a whole number of seconds, at most 86400 (a day).', field: 'interval' };
  const timeout = v.timeout.trim();
  if (!/^\d+$/.test(timeout) || Number(timeout) < 1000 || Number(timeout) > 20_000) return { error: 'The timeout is a whole number of milliseconds from 1000 to 20000.', field: 'timeout' };
  return { body: { name, proxies, type: v.type, region: v.region, interval_s: Number(interval), timeout: Number(timeout) } };
}

// ---- the proxies listing ----------------------------------------------------------------------

export interface ProxyFilters {
  status: string;
  country: string;
  anonymity: string;
  type: string;
  https: string;
  sort: string;
  /** A target's name ('' or absent: not filtered). */
  target?: string;
}

/** The query of GET /pools/{id}/proxies for these filters ('' = not filtered). */
export function proxiesQuery(f: ProxyFilters, o: { format: 'json' | 'txt' | 'csv'; limit: number; cursor?: string | null }): string {
  const q = new URLSearchParams();
  q.set('status', f.status === '' ? 'all' : f.status);
  const country = f.country.trim();
  if (/^[A-Za-z]{2}$/.test(country)) q.set('country', country.toUpperCase());
  if (f.anonymity !== '') q.set('anonymity', f.anonymity);
  if (f.type !== '') q.set('type', f.type);
  if (f.https !== '') q.set('https', f.https);
  if (f.sort !== '') q.set('sort', f.sort);
  if (f.target !== undefined && f.target !== '') q.set('target', f.target);
  q.set('limit', String(o.limit));
  if (o.cursor) q.set('cursor', o.cursor);
  q.set('format', o.format);
  return q.toString();
}

/** A download's file name: "<pool name>-working.txt". */
export function downloadName(poolName: string, status: string, format: string): string {
  const base = poolName.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'pool';
  return `${base}-${status === '' ? 'all' : status}.${format}`;
}

// ---- markup ---------------------------------------------------------------------------------

const STATUS_BADGE: Record<string, string> = { working: 'ok', failed: 'bad', unchecked: 'muted' };

export function poolRowHtml(p: PoolView, nowMs: number): string {
  const name = escapeXml(p.name);
  const toggle =
    p.state === 'active'
      ? `<button type="button" class="secondary small" data-act="pause" data-id="${p.id}" aria-label="Pause ${name}">Pause</button>`
      : `<button type="button" class="secondary small" data-act="resume" data-id="${p.id}" aria-label="Resume ${name}">Resume</button>`;
  return (
    `<tr data-pool="${p.id}"><td><a href="#/pools/${p.id}">${name}</a></td>` +
    `<td><span class="badge ${p.state === 'active' ? 'ok' : 'bad'}">${escapeXml(stateText(p))}</span></td>` +
    `<td class="num">${formatCount(p.counts.total)}</td><td class="num">${formatCount(p.counts.working)}</td>` +
    `<td class="num">${formatCount(p.counts.failed)}</td><td class="num">${formatCount(p.counts.unchecked)}</td>` +
    `<td class="num">${escapeXml(intervalText(p.interval_s))}</td>` +
    `<td>${escapeXml(p.state === 'active' ? dueText(p.next_due_at, nowMs) : '—')}</td>` +
    `<td class="links">${toggle} <button type="button" class="secondary small" data-act="delete" data-id="${p.id}" aria-label="Delete ${name}">Delete</button></td></tr>`
  );
}

function addressText(p: PoolProxyView['proxy']): string {
  return p.hasAuth && p.username !== undefined ? `${p.username}@${p.host}:${p.port}` : `${p.host}:${p.port}`;
}

/** The protocols a proxy passed as ("socks5 socks4"), its type, or "—" when not known yet. */
export function protocolText(p: Pick<PoolProxyView, 'type' | 'protocols' | 'status'>): string {
  if (p.status === 'working' && p.protocols !== undefined && p.protocols.length > 0) return p.protocols.join(' ');
  return p.type ?? '—';
}

/** A proxy's cell of one target: passed (with the status seen), failed (with it), or not fetched yet. */
export function targetCellHtml(t: { ok: boolean; status: number | null } | null | undefined): string {
  if (t === undefined || t === null) return '<td class="muted">—</td>';
  const status = t.status === null ? '' : ` ${t.status}`;
  return t.ok ? `<td><span class="badge ok">passes${status}</span></td>` : `<td><span class="badge bad">fails${status}</span></td>`;
}

/** The header cells of the pool's targets, one per name. */
export function targetHeadHtml(names: readonly string[]): string {
  return names.map((n) => `<th scope="col">Target ${escapeXml(n)}</th>`).join('');
}

export function proxyRowHtml(p: PoolProxyView, nowMs: number, targets: readonly string[] = []): string {
  const status = `<span class="badge ${STATUS_BADGE[p.status] ?? 'muted'}">${escapeXml(p.status)}</span>`;
  const country = p.country === null ? '<span class="muted">—</span>' : escapeXml(p.country_name ?? p.country);
  const error = p.error === undefined ? '' : `<code>${escapeXml(p.error.code)}</code> <span class="err-msg" title="${escapeXml(p.error.message)}">${escapeXml(p.error.message)}</span>`;
  return (
    `<tr><td class="mono">${escapeXml(addressText(p.proxy))}</td><td>${status}</td><td>${escapeXml(protocolText(p))}</td>` +
    `<td class="num">${uptimeText(p.uptime.h24)}</td><td class="num">${uptimeText(p.uptime.d7)}</td>` +
    `<td class="num">${p.latency_p50_ms === null ? '—' : `${formatCount(p.latency_p50_ms)} ms`}</td>` +
    `<td>${escapeXml(relativeTime(p.last_change_at, nowMs))}</td><td>${country}</td>` +
    `<td>${escapeXml(p.anonymity ?? '—')}</td>${targets.map((n) => targetCellHtml(p.targets?.[n])).join('')}<td class="err">${error}</td></tr>`
  );
}

/** The warnings of a POST /pools or PATCH answer as lines (`balance_runs_out`: its message, else the code and the hours left). */
export function poolWarningTexts(body: unknown): string[] {
  const w = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).warnings : undefined;
  if (!Array.isArray(w)) return [];
  const out: string[] = [];
  for (const item of w) {
    if (typeof item !== 'object' || item === null) continue;
    const { code, message, hours_left: hours } = item as Record<string, unknown>;
    if (typeof message === 'string' && message !== '') out.push(message);
    else if (typeof code === 'string') out.push(typeof hours === 'number' ? `${code}: about ${formatCount(Math.round(hours))} hours of checks left` : code);
  }
  return out;
}

/** The gateway's URLs for pool `poolId` (host null: the page's own host), or null without a gateway. */
export function poolGatewayUrls(gateway: { host: string | null; port: number } | null, pageHost: string, poolId: string, key: string): GatewayUrls | null {
  if (gateway === null) return null;
  return gatewayUrls(gateway.host ?? pageHost.replace(/^\[|\]$/g, ''), gateway.port, poolId, key);
}

/** The pool's summary cards: [label, value]. */
export function poolCards(p: PoolView, nowMs: number): [string, string][] {
  return [
    ['Working now', `${formatCount(p.counts.working)} of ${formatCount(p.counts.total)}`],
    ['Failed', formatCount(p.counts.failed)],
    ['Not checked yet', formatCount(p.counts.unchecked)],
    ['State', stateText(p)],
    ['Checked every', `${intervalText(p.interval_s)} (${p.type}, ${p.region})`],
    ['Next check', p.state === 'active' ? dueText(p.next_due_at, nowMs) : '—'],
    ['Checks per day', formatCount(p.checks_per_day)],
  ];
}

// ---- live events (GET /ws?pool=) --------------------------------------------------------------

/** One message of `/ws?pool=` as the page reads it (docs/API.md "Pools", events). */
export interface PoolEventView {
  pool: string;
  event: 'proxy.up' | 'proxy.down' | 'round.completed' | 'pool.paused' | 'pool.resumed';
  at: string;
  proxy?: { host: string; port: number; hasAuth: boolean; username?: string };
  counts: PoolView['counts'];
  responseTime?: string;
  error?: { code: string; message: string };
  round?: { checked: number; working: number; failed: number; not_tried: number; charged: number };
  reason?: 'insufficient_checks' | 'owner';
}

/** The events kept in the live list. */
export const MAX_LIVE_EVENTS = 20;

/** Whether a socket message is an event of pool `poolId` (anything else is ignored). */
export function isPoolEvent(m: unknown, poolId: string): m is PoolEventView {
  if (typeof m !== 'object' || m === null) return false;
  const e = m as Partial<PoolEventView>;
  return e.pool === poolId && typeof e.event === 'string' && typeof e.at === 'string' && typeof e.counts === 'object' && e.counts !== null;
}

/** The pool after an event: its counts, and its state for pool.paused / pool.resumed. */
export function applyPoolEvent(p: PoolView, e: PoolEventView): PoolView {
  const next: PoolView = { ...p, counts: { ...e.counts } };
  if (e.event === 'pool.paused') {
    next.state = 'paused';
    next.paused_reason = e.reason ?? null;
  } else if (e.event === 'pool.resumed') {
    next.state = 'active';
    next.paused_reason = null;
  } else if (e.event === 'round.completed') {
    next.last_round_at = e.at;
  }
  return next;
}

/** Whether an event changes the proxies table (a verdict changed, or a round wrote new ones). */
export function changesProxies(e: PoolEventView): boolean {
  return e.event === 'proxy.up' || e.event === 'proxy.down' || e.event === 'round.completed';
}

/** The event as one line of the live list: its time (local "HH:MM:SS") and what happened. */
export function poolEventText(e: PoolEventView): { time: string; text: string; kind: string } {
  const d = new Date(e.at);
  const time = Number.isNaN(d.getTime()) ? e.at : `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`;
  const who = e.proxy === undefined ? '' : addressText(e.proxy);
  switch (e.event) {
    case 'proxy.up':
      return { time, kind: 'up', text: `${who} is up${e.responseTime ? ` (${e.responseTime})` : ''}` };
    case 'proxy.down':
      return { time, kind: 'down', text: `${who} is down${e.error ? `: ${e.error.message}` : ''}` };
    case 'round.completed': {
      const r = e.round;
      return { time, kind: 'round', text: r === undefined ? 'Round completed' : `Round: ${formatCount(r.checked)} checked, ${formatCount(r.working)} working, ${formatCount(r.failed)} failed` };
    }
    case 'pool.paused':
      return { time, kind: 'paused', text: e.reason === 'insufficient_checks' ? 'Paused: not enough checks' : 'Paused by you' };
    case 'pool.resumed':
      return { time, kind: 'resumed', text: 'Resumed' };
  }
}

/** The live list's item markup (escaped). */
export function poolEventHtml(e: PoolEventView): string {
  const t = poolEventText(e);
  return `<li class="pool-event ${t.kind}"><time datetime="${escapeXml(e.at)}">${escapeXml(t.time)}</time> ${escapeXml(t.text)}</li>`;
}
