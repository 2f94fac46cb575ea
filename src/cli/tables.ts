/**
 * The CLI's text renderings, all pure (data in, string out): small aligned
 * tables, the end-of-check summary (working/total, anonymity split, top
 * countries and ISPs, processing time; the failures per error code, with
 * type auto the protocols split, with samples the rotating count: each only
 * when the response has it), the
 * `me` page with its 30-day usage
 * bar chart, `regions` and `health`.
 */
import type { CheckResponseBody, HealthBody, MeBody, RegionsBody } from './api-client';
import { fmtInt } from './progress-bar';

export type Align = 'l' | 'r';

const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length;
const pad = (s: string, w: number, a: Align) => (a === 'r' ? ' '.repeat(Math.max(0, w - visible(s))) + s : s + ' '.repeat(Math.max(0, w - visible(s))));

/** Rows (the first one a header when `header`) as aligned lines, two spaces between columns, indented. */
export function table(rows: readonly (readonly string[])[], align: readonly Align[], opts: { header?: boolean; indent?: string } = {}): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, visible(c))));
  const indent = opts.indent ?? '  ';
  const lines = rows.map((r) => indent + r.map((c, i) => pad(c, widths[i]!, align[i] ?? 'l')).join('  ').trimEnd());
  if (opts.header && lines.length > 0) {
    lines.splice(1, 0, indent + widths.map((w) => '-'.repeat(w)).join('  '));
  }
  return lines.join('\n');
}

export const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '0.0%');

/** The `n` largest entries, ties by name. */
export function topEntries(counts: Record<string, number>, n: number): [string, number][] {
  return Object.entries(counts)
    .filter(([, v]) => typeof v === 'number')
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, n);
}

export interface SummaryOptions {
  color: boolean;
  /** The service runs on one machine (no region agents in /health): every region probes from it. */
  oneMachine?: boolean;
  /** Rows per top-N table. Default 5. */
  top?: number;
}

const paint = (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** The end-of-check summary. */
export function renderSummary(r: CheckResponseBody, o: SummaryOptions): string {
  const s = r.summary;
  const m = r.metadata;
  const total = m.total_checked;
  const working = s.total_working;
  const top = o.top ?? 5;
  const out: string[] = [];
  const place = o.oneMachine ? ' (probed from this machine)' : m.region_name ? ` (${m.region_name})` : '';
  const where = [m.proxy_type, m.region_used && `${m.region_used}${place}`, m.timeout_used && `timeout ${m.timeout_used}`]
    .filter(Boolean)
    .join(', ');
  out.push(`Checked ${fmtInt(total)} ${total === 1 ? 'proxy' : 'proxies'}${where ? ` [${where}]` : ''} in ${m.processing_time ?? '?'}`);
  const skipped: string[] = [];
  if (m.total_invalid) skipped.push(`${fmtInt(m.total_invalid)} invalid`);
  if (m.total_duplicates) skipped.push(`${fmtInt(m.total_duplicates)} duplicate${m.total_duplicates === 1 ? '' : 's'}`);
  out.push(
    `Working: ${paint(o.color, working > 0 ? '32' : '31', fmtInt(working))} / ${fmtInt(total)} (${pct(working, total)})` +
      (skipped.length > 0 ? `   skipped: ${skipped.join(', ')}` : ''),
  );
  if (typeof s.rotating === 'number') {
    out.push(`Rotating: ${fmtInt(s.rotating)} / ${fmtInt(working)} working (more than one exit address across the samples)`);
  }
  const failures = renderFailures(s.errors, top);
  if (failures !== '') out.push('', failures);
  if (working > 0) {
    const a = s.anonymity_levels;
    out.push('');
    out.push(
      table(
        [
          ['Anonymity', 'proxies', 'share'],
          ['elite', fmtInt(a.elite), pct(a.elite, working)],
          ['anonymous', fmtInt(a.anonymous), pct(a.anonymous, working)],
          ['transparent', fmtInt(a.transparent), pct(a.transparent, working)],
        ],
        ['l', 'r', 'r'],
        { header: true },
      ),
    );
    const countries = topEntries(s.countries, top);
    const more = (all: Record<string, number>, shown: number) => {
      const n = Object.keys(all).length - shown;
      return n > 0 ? `\n  … and ${fmtInt(n)} more` : '';
    };
    out.push('');
    out.push(table([['Top countries', 'proxies', 'share'], ...countries.map(([k, v]) => [k, fmtInt(v), pct(v, working)])], ['l', 'r', 'r'], { header: true }) + more(s.countries, countries.length));
    const isps = topEntries(s.top_isps, top);
    out.push('');
    out.push(table([['Top ISPs', 'proxies', 'share'], ...isps.map(([k, v]) => [k, fmtInt(v), pct(v, working)])], ['l', 'r', 'r'], { header: true }));
    const p = s.protocols;
    if (p !== undefined && p !== null) {
      out.push('');
      out.push(
        table(
          [['Protocols', 'proxies', 'share'], ...(['http', 'socks4', 'socks5'] as const).map((k) => [k, fmtInt(p[k] ?? 0), pct(p[k] ?? 0, working)])],
          ['l', 'r', 'r'],
          { header: true },
        ),
      );
    }
  }
  const u = m.user;
  if (u !== undefined) {
    out.push('');
    const plan = u.subscription_detail?.UnlimitedPro ? ' (UnlimitedPro: not charged)' : '';
    out.push(`Checks left: ${fmtInt(u.remaining_checks ?? 0)}${plan}`);
  }
  return out.join('\n');
}

/**
 * `summary.errors` as a table: the most frequent codes first, their share of
 * the failed proxies; '' when there is none (or the service does not send it).
 */
export function renderFailures(errors: Record<string, number> | undefined, top: number): string {
  if (errors === undefined || errors === null) return '';
  const all = topEntries(errors, Number.MAX_SAFE_INTEGER).filter(([, n]) => n > 0);
  if (all.length === 0) return '';
  const failed = all.reduce((a, [, n]) => a + n, 0);
  const shown = all.slice(0, top);
  const rest = all.slice(top).reduce((a, [, n]) => a + n, 0);
  const rows = shown.map(([code, n]) => [code, fmtInt(n), pct(n, failed)]);
  if (rest > 0) rows.push([`${all.length - top} other codes`, fmtInt(rest), pct(rest, failed)]);
  return table([['Failed because', 'proxies', 'share'], ...rows], ['l', 'r', 'r'], { header: true });
}

/** The file's `custom_url_validation.per_url_summary` (fields the CLI shows). */
export interface CustomUrlRow {
  url: string;
  success_count: number;
  failed_count: number;
  success_rate: string;
}

/** Per custom URL: how many working proxies reached it. */
export function renderCustomUrls(rows: readonly CustomUrlRow[]): string {
  return table(
    [['Custom URL', 'passed', 'failed', 'rate'], ...rows.map((r) => [r.url, fmtInt(r.success_count), fmtInt(r.failed_count), r.success_rate])],
    ['l', 'r', 'r', 'r'],
    { header: true },
  );
}

// ---- me ------------------------------------------------------------------------

const BLOCKS = ['', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/**
 * A vertical bar chart, one column per day (oldest left), `height` rows, a
 * y-axis with the maximum and 0, and the first and last day under it.
 */
export function usageChart(usage: readonly { day: string; total_checked: number }[], opts: { height?: number; ascii?: boolean } = {}): string {
  const height = Math.max(1, opts.height ?? 6);
  const values = usage.map((u) => Math.max(0, u.total_checked));
  const max = Math.max(0, ...values);
  const label = fmtInt(max);
  const w = Math.max(label.length, 1);
  const lines: string[] = [];
  for (let row = height; row >= 1; row--) {
    const cells = values.map((v) => {
      if (max === 0 || v === 0) return ' ';
      // eighths of a row; any non-zero day shows at least the lowest mark
      const eighths = Math.max(1, Math.round((v / max) * height * 8));
      const here = Math.min(8, Math.max(0, eighths - (row - 1) * 8));
      if (opts.ascii) return here >= 4 || (row === 1 && here > 0) ? '#' : ' ';
      return here === 0 ? ' ' : BLOCKS[here]!;
    });
    const axis = row === height ? label.padStart(w) : row === 1 ? '0'.padStart(w) : ' '.repeat(w);
    lines.push(`  ${axis} ${opts.ascii ? '|' : '│'}${cells.join('')}`.trimEnd());
  }
  lines.push(`  ${' '.repeat(w)} ${opts.ascii ? '+' : '└'}${(opts.ascii ? '-' : '─').repeat(values.length)}`);
  if (usage.length > 0) {
    const first = usage[0]!.day.slice(5);
    const last = usage.at(-1)!.day.slice(5);
    const gap = Math.max(1, values.length - first.length - last.length);
    lines.push(`  ${' '.repeat(w)}  ${first}${' '.repeat(gap)}${last}`);
  }
  return lines.join('\n');
}

export function renderMe(me: MeBody, opts: { links: boolean; ascii: boolean; now: Date; historyRows?: number }): string {
  const u = me.user;
  const out: string[] = [];
  const balance = u.checks ?? u.remaining_checks ?? 0;
  out.push(`Account   ${u.email}${u.id ? `  (${u.id})` : ''}`);
  const parts = u.breakdown ? `  (base ${fmtInt(u.breakdown.root_balance)}, promotional ${fmtInt(u.breakdown.temp_balance)})` : '';
  out.push(`Balance   ${fmtInt(balance)} checks${parts}`);
  const sd = u.subscription_detail;
  let plan = 'pay per check';
  if (sd?.UnlimitedPro) plan = `UnlimitedPro${sd.unlimited_expired_at ? ` until ${sd.unlimited_expired_at.slice(0, 10)}` : ''} (checks are not charged)`;
  else if (sd?.unlimited_expired_at) plan = `pay per check (UnlimitedPro ended ${sd.unlimited_expired_at.slice(0, 10)})`;
  out.push(`Plan      ${plan}`);
  const usage = me.usage_last_30_days ?? [];
  const sum = usage.reduce((a, d) => a + d.total_checked, 0);
  out.push('');
  out.push(`Checks per day, last ${usage.length} days (UTC): ${fmtInt(sum)} in total`);
  out.push(usageChart(usage, { ascii: opts.ascii }));
  out.push('');
  const rows = opts.historyRows ?? 10;
  const hist = me.history.slice(0, rows);
  const count = me.history_count ?? me.history.length;
  if (hist.length === 0) {
    out.push('Recent checks: none yet');
  } else {
    out.push(`Recent checks (${hist.length} of ${fmtInt(count)})`);
    out.push(
      table(
        [
          ['id', 'when (UTC)', 'type', 'checked', 'working', 'share', 'result'],
          ...hist.map((h) => [
            String(h.id),
            h.scanned_at.slice(0, 16).replace('T', ' '),
            h.proxy_type,
            fmtInt(h.total_checked),
            fmtInt(h.total_working),
            pct(h.total_working, h.total_checked),
            h.result_url === null ? 'expired' : opts.links ? 'see below' : 'available',
          ]),
        ],
        ['r', 'l', 'l', 'r', 'r', 'r', 'l'],
        { header: true },
      ),
    );
    if (opts.links) {
      const withLinks = hist.filter((h) => h.result_url !== null);
      if (withLinks.length > 0) {
        out.push('');
        out.push('Result links (valid 12 hours; .json, or .csv / .txt with the same token):');
        for (const h of withLinks) out.push(`  ${String(h.id).padStart(4)}  ${h.result_url}`);
      }
    } else if (hist.some((h) => h.result_url !== null)) {
      out.push('  (proxycheck me --links prints the download links)');
    }
  }
  return out.join('\n');
}

/** `oneMachine`: the service runs on one machine (no region agents in /health), so every region probes from it. */
export function renderRegions(r: RegionsBody, oneMachine = false): string {
  const rows = r.regions.map((x) => [x.code, x.name, String(x.endpoints), x.code === r.default ? 'default' : x.code === 'test1' ? 'not for checks' : '']);
  const t = table([['code', 'name', 'endpoints', 'note'], ...rows], ['l', 'l', 'r', 'l'], { header: true });
  if (!oneMachine) return t;
  return `${t}\n\nThis service runs on one machine: every region probes from this machine, whatever its name\n(a cluster has region agents where the names say).`;
}

/** 3d 4h, 2h 5m, 4m 2s, 9s */
export function fmtUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** Where the gateway listens ("off" without one); host null: the API's host. */
export function gatewayText(gateway: HealthBody['gateway'], apiUrl: string): string {
  if (gateway === undefined || gateway === null) return 'off (the operator turns it on with GATEWAY_PORT)';
  let host = gateway.host;
  if (host === null) {
    try {
      host = new URL(apiUrl).hostname;
    } catch {
      host = '?';
    }
  }
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${h}:${gateway.port} (\`proxycheck pool gateway <id>\` prints a pool's proxy URLs)`;
}

export function renderHealth(h: HealthBody, url: string): string {
  const rows = [
    ['service', url],
    ['status', h.status],
    ['version', h.version ?? '?'],
    ['uptime', typeof h.uptime === 'number' ? fmtUptime(h.uptime) : '?'],
    ['database', h.database ?? '?'],
    ['regions', `${typeof h.regions === 'number' ? String(h.regions) : '?'}${Array.isArray(h.agents) ? `, ${h.agents.length} live region agents` : ', all probed from this machine'}`],
    ['judge', h.judge_reachable !== undefined ? `reachable from ${h.judge_reachable}` : 'at the address its operator set'],
    ['gateway', gatewayText(h.gateway, url)],
  ];
  return table(rows, ['l', 'l'], { indent: '' });
}
