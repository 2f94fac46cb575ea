/**
 * The "Account" view, from GET /me: e-mail, balance (root + temporary), plan,
 * a 30-day usage column chart and the recent checks with their download
 * links and a "View" button that opens the result in the results view.
 * It owns its markup (accountViewHtml) and exports its ids.
 */
import { apiGet } from './api';
import { win, type ButtonEl, type Elem, type TableEl } from './browser';
import { dailyChart } from './charts';
import { byId, setText } from './dom';
import { errorText, formatTime, resultLinks } from './format';
import { escapeXml, formatCount } from './svg';

interface Me {
  user?: {
    email?: string;
    checks?: number;
    breakdown?: { root_balance?: number; temp_balance?: number };
    subscription_detail?: { UnlimitedPro?: boolean; unlimited_expired_at?: string };
  };
  history?: { id: number; total_checked: number; total_working: number; result_url: string | null; proxy_type: string; scanned_at: string }[];
  history_count?: number;
  usage_last_30_days?: { day: string; total_checked: number }[];
}

export const ACCOUNT_IDS = Object.freeze({ view: 'view-account', error: 'account-error', body: 'account-body', cards: 'a-cards', usage: 'a-usage', history: 'a-history' });

export function accountViewHtml(): string {
  return `<section id="view-account" class="view" aria-labelledby="account-h" hidden>
  <h1 id="account-h" tabindex="-1">Account</h1>
  <p id="account-error" class="error" role="alert"></p>
  <div id="account-body" aria-busy="true">
    <dl id="a-cards" class="cards"></dl>
    <section class="panel" aria-labelledby="usage-h">
      <h2 id="usage-h">Checks per day, last 30 days</h2>
      <div id="a-usage"></div>
    </section>
    <section class="panel" aria-labelledby="history-h">
      <h2 id="history-h">Recent checks</h2>
      <div class="table-wrap" role="region" aria-labelledby="history-h" tabindex="0">
        <table id="a-history"><thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Checked</th><th scope="col">Working</th><th scope="col">Result</th></tr></thead><tbody></tbody></table>
      </div>
    </section>
  </div>
</section>`;
}

type HistoryRow = NonNullable<Me['history']>[number];

/** A row of the recent checks: when, type, counts, and View plus its downloads (or "expired"). */
function historyRowHtml(h: HistoryRow): string {
  const links = resultLinks(h.result_url);
  const when = formatTime(h.scanned_at);
  const result =
    links === null
      ? '<span class="muted">expired</span>'
      : `<button type="button" class="secondary small" data-link="${escapeXml(links.json)}" aria-label="View the check of ${escapeXml(when)}">View</button> ` +
        (['json', 'csv', 'txt'] as const)
          .map((ext) => `<a href="${escapeXml(links[ext])}" download aria-label="${ext.toUpperCase()} of the check of ${escapeXml(when)}">${ext.toUpperCase()}</a>`)
          .join(' ');
  return (
    `<tr><td>${escapeXml(when)}</td><td>${escapeXml(String(h.proxy_type).toUpperCase())}</td>` +
    `<td class="num">${formatCount(h.total_checked)}</td><td class="num">${formatCount(h.total_working)}</td><td class="links">${result}</td></tr>`
  );
}

/** The account's cards. */
function accountCardsHtml(me: Me): string {
  const u = me.user ?? {};
  const b = u.breakdown ?? {};
  const items: [string, string][] = [
    ['Signed in as', u.email ?? '—'],
    ['Balance', `${formatCount(u.checks ?? 0)} checks`],
    ['Of which', `${formatCount(b.root_balance ?? 0)} base + ${formatCount(b.temp_balance ?? 0)} temporary`],
    ['Plan', planText(u.subscription_detail)],
    ['Checks run', formatCount(me.history_count ?? 0)],
  ];
  return items.map(([k, v]) => `<div class="card"><dt>${escapeXml(k)}</dt><dd>${escapeXml(v)}</dd></div>`).join('');
}

export function planText(sub: { UnlimitedPro?: boolean; unlimited_expired_at?: string } | undefined): string {
  if (sub?.UnlimitedPro) return sub.unlimited_expired_at ? `UnlimitedPro until ${formatTime(sub.unlimited_expired_at)}` : 'UnlimitedPro';
  if (sub?.unlimited_expired_at) return `Pay per check (UnlimitedPro ended ${formatTime(sub.unlimited_expired_at)})`;
  return 'Pay per check';
}

export function setupAccountView(deps: { key: () => string | null; onUnauthorized: () => void; onOpen: (link: string) => void }) {
  const err = byId(ACCOUNT_IDS.error);
  const body = byId(ACCOUNT_IDS.body);
  const cards = byId(ACCOUNT_IDS.cards);
  const usage = byId(ACCOUNT_IDS.usage);
  const history = byId<TableEl>(ACCOUNT_IDS.history);
  const tbody = history.tBodies[0]!;

  let days: { day: string; value: number }[] | null = null;
  const drawUsage = () => {
    if (days !== null) usage.innerHTML = dailyChart(days, 'Proxies checked per day over the last 30 days (UTC)', 'checks', usage.clientWidth);
  };
  let resizeTimer: ReturnType<typeof setTimeout> | null = null;
  win().addEventListener('resize', () => {
    if (resizeTimer !== null) clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      resizeTimer = null;
      if (usage.clientWidth > 0) drawUsage();
    }, 150);
  });

  tbody.addEventListener('click', (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-link]');
    if (btn?.dataset.link) deps.onOpen(btn.dataset.link);
  });

  return {
    async load(): Promise<Me | null> {
      const key = deps.key();
      if (key === null) {
        deps.onUnauthorized();
        return null;
      }
      body.setAttribute('aria-busy', 'true');
      setText(err, '');
      const r = await apiGet('/me', key);
      body.setAttribute('aria-busy', 'false');
      if (r.status === 401) {
        deps.onUnauthorized();
        return null;
      }
      if (!r.ok) {
        setText(err, errorText(r.status, r.body));
        return null;
      }
      const me = r.body as Me;
      cards.innerHTML = accountCardsHtml(me);
      const wrap = history.closest('.table-wrap');
      if (wrap) wrap.scrollLeft = 0;
      days = (me.usage_last_30_days ?? []).map((d) => ({ day: d.day, value: d.total_checked }));
      drawUsage();
      const rows = me.history ?? [];
      tbody.innerHTML = rows.length === 0 ? '<tr><td colspan="5" class="muted">No checks yet.</td></tr>' : rows.map(historyRowHtml).join('');
      return me;
    },
  };
}
