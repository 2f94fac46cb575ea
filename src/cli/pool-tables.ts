/**
 * The pool commands' text renderings, pure (data and the clock in, string
 * out): `pool list` (a table of the account's pools), `pool show` (one
 * pool), and the one-line reports of create, add/remove, pause/resume and
 * delete, each followed by the answer's `warnings` (`balance_runs_out`:
 * the pools cost more a day than the balance). The API's objects are
 * src/pools/shape.ts's.
 */
import type { PoolChangedBody, PoolObject, PoolWarning } from './api-client';
import { fmtInt } from './progress-bar';
import { fmtUptime, table } from './tables';

/** "active", "paused by you", "paused: not enough checks". */
export function stateText(p: Pick<PoolObject, 'state' | 'paused_reason'>): string {
  if (p.state === 'active') return 'active';
  return p.paused_reason === 'insufficient_checks' ? 'paused: not enough checks' : 'paused by you';
}

/** "in 4m 10s", "now" (due or overdue), "-" (none). */
export function dueText(at: string | null, nowMs: number): string {
  if (at === null) return '-';
  const s = (Date.parse(at) - nowMs) / 1000;
  return s <= 0 ? 'now' : `in ${fmtUptime(s)}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;

export function renderPools(pools: readonly PoolObject[], nowMs: number): string {
  if (pools.length === 0) return 'No pools yet. Create one: proxycheck pool create <name> proxies.txt';
  const rows = pools.map((p) => [
    p.id,
    p.name,
    stateText(p),
    fmtInt(p.counts.total),
    fmtInt(p.counts.working),
    fmtInt(p.counts.failed),
    fmtInt(p.counts.unchecked),
    fmtUptime(p.interval_s),
    p.state === 'active' ? dueText(p.next_due_at, nowMs) : '-',
  ]);
  return table([['id', 'name', 'state', 'proxies', 'working', 'failed', 'unchecked', 'interval', 'next check'], ...rows], ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'l'], {
    header: true,
    indent: '',
  });
}

export function renderPool(p: PoolObject, nowMs: number): string {
  const c = p.counts;
  const rows: string[][] = [
    ['pool', `${p.id}  "${p.name}"`],
    ['state', stateText(p)],
    ['proxies', `${fmtInt(c.total)}: ${fmtInt(c.working)} working, ${fmtInt(c.failed)} failed, ${fmtInt(c.unchecked)} unchecked`],
    ['checks', `${p.type} from ${p.region}, timeout ${p.timeout} ms, https ${p.https ? 'on' : 'off'}, working ones every ${fmtUptime(p.interval_s)}`],
    ['cost', `~${plural(p.checks_per_day, 'check')} a day at today's states; ${fmtInt(p.checks_last_24h)} in the last 24 h`],
    ['last round', p.last_round_at ?? 'none yet'],
    ['next check', p.state === 'active' ? dueText(p.next_due_at, nowMs) : '-'],
    ['created', p.created_at],
  ];
  for (const s of p.sources) rows.push(['source', `${s.url} (fetched every ${fmtUptime(s.every_s)})`]);
  for (const u of p.customUrls) {
    const passing = c.targets?.[u.name];
    rows.push(['target', `${u.name}: ${u.url} (${u.requiredStatusCodes.join('|')}${u.requiredText !== undefined ? `, "${u.requiredText}"` : ''})${passing !== undefined ? `: ${fmtInt(passing)} working pass it` : ''}`]);
  }
  return table(rows, ['l', 'l'], { indent: '' });
}

function skipped(s: PoolChangedBody['submitted']): string {
  const parts: string[] = [];
  if (s.total_invalid > 0) parts.push(`${fmtInt(s.total_invalid)} invalid`);
  if (s.total_duplicates > 0) parts.push(plural(s.total_duplicates, 'duplicate'));
  return parts.length === 0 ? '' : ` (skipped: ${parts.join(', ')})`;
}

export function renderCreated(p: PoolChangedBody): string {
  return (
    `Created pool ${p.id} "${p.name}" with ${plural(p.counts.total, 'proxy', 'proxies')}${skipped(p.submitted)}.\n` +
    `Its proxies are checked from ${p.region} (${p.type}); working ones every ${fmtUptime(p.interval_s)}, failing ones less often.\n` +
    `The working ones, one per line: proxycheck pool working ${p.id}`
  );
}

export function renderAdded(p: PoolChangedBody, action: 'add' | 'remove'): string {
  const n = action === 'add' ? p.submitted.added : p.submitted.removed;
  const verb = action === 'add' ? 'Added' : 'Removed';
  const prep = action === 'add' ? 'to' : 'from';
  return `${verb} ${plural(n, 'proxy', 'proxies')} ${prep} pool ${p.id}${skipped(p.submitted)}; it holds ${plural(p.counts.total, 'proxy', 'proxies')} now.`;
}

/** One `Warning: ...` line per warning of a create / PATCH answer ('' without any). */
export function renderPoolWarnings(warnings: readonly PoolWarning[] | undefined): string {
  const lines = (warnings ?? []).map((w) => {
    // the message says it all; without one, the code and the hours left
    if (typeof w.message === 'string' && w.message !== '') return `Warning: ${w.message}`;
    const hours = typeof w.hours_left === 'number' ? ` (the balance lasts about ${fmtUptime(Math.max(0, w.hours_left) * 3600)} more)` : '';
    return `Warning: ${w.code}${hours}`;
  });
  return lines.join('\n');
}

/** The answer's report with its warnings under it. */
export function withWarnings(report: string, p: Pick<PoolChangedBody, 'warnings'>): string {
  const w = renderPoolWarnings(p.warnings);
  return w === '' ? report : `${report}\n${w}`;
}
