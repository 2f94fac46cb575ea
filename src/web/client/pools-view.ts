/**
 * The "Pools" view (#/pools, #/pools/<id>): the account's pools (counts,
 * state, interval, next check; pause / resume, and delete in two clicks),
 * a form that creates a pool from a pasted list, and per pool its cards
 * and its proxies (status, uptime 24 h / 7 d, latency, last change,
 * country, anonymity, error) with filters, pages (the API's cursor) and the
 * listing's downloads (TXT: the addresses as given; CSV; JSON), each every
 * page of the current filters. Pure parts: pool-format.ts.
 *
 * Live: while a pool is open, its events come over `/ws?pool=` (the key in
 * the query): each one updates the cards' and the list's counts (and the
 * state on a pause or resume) at once, joins the short list of the latest
 * events (MAX_LIVE_EVENTS, newest first), and a change of verdicts re-reads
 * the proxies table (at most once a second). A socket that closes by
 * itself is opened again after LIVE_REOPEN_MS while the pool is still open;
 * "pool deleted" closes the pool instead. Leaving the pool (another pool,
 * the list, another view) closes its socket.
 *
 * A create or PATCH answer's `warnings` (`balance_runs_out`: the pools cost
 * more checks a day than the balance) show in a banner over the view until
 * the next change. Where the service runs a gateway (/health `gateway`,
 * given with setGateway), a pool's page shows its two gateway URLs.
 *
 * `refresh()` re-reads the open pool and the list; the hidden `#pool-chart`
 * section is where the working-now chart over time goes (from the pool's
 * rounds).
 */
import { apiGet, apiPost, apiSend, apiText, openPoolEvents } from './api';
import { create, option, win, type AnchorEl, type ButtonEl, type Elem, type InputEl, type SelectEl, type TableEl, type TextAreaEl } from './browser';
import { byId, setText, show } from './dom';
import { errorText } from './format';
import {
  applyPoolEvent,
  changesProxies,
  isPoolEvent,
  MAX_LIVE_EVENTS,
  poolEventHtml,
  downloadName,
  poolCards,
  poolCreateBody,
  poolGatewayUrls,
  poolWarningTexts,
  poolRowHtml,
  proxiesQuery,
  proxyRowHtml,
  type PoolFormValues,
  type PoolProxyView,
  type PoolView,
  type ProxyFilters,
} from './pool-format';
import { escapeXml, formatCount } from './svg';

const PAGE = 50;
const DOWNLOAD_PAGE = 10_000;
const CONFIRM_MS = 4000;
const LIVE_REOPEN_MS = 5000;
const LIVE_RELOAD_MS = 1000;

const jsonOrNull = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export interface PoolsViewDeps {
  key: () => string | null;
  onUnauthorized: () => void;
}

export function setupPoolsView(deps: PoolsViewDeps) {
  const err = byId('pools-error');
  const tbody = byId<TableEl>('pools-table').tBodies[0]!;
  const empty = byId('pools-empty');
  const form = byId('pool-form');
  const formError = byId('pool-form-error');
  const created = byId('pool-created');
  const detail = byId('pool-detail');
  const title = byId('pool-h');
  const cards = byId('pool-cards');
  const ptbody = byId<TableEl>('pool-proxies').tBodies[0]!;
  const pcount = byId('pp-count');
  const prev = byId<ButtonEl>('pp-prev');
  const next = byId<ButtonEl>('pp-next');
  const region = byId<SelectEl>('pool-region');
  const liveState = byId('pool-live-state');
  const liveEmpty = byId('pool-live-empty');
  const liveList = byId('pool-events');
  const warningList = byId('pool-warnings');
  const gatewayBox = byId('pool-gateway');
  const filterIds = { status: 'pf-status', country: 'pf-country', anonymity: 'pf-anon', type: 'pf-type', https: 'pf-https', sort: 'pf-sort' } as const;

  let pools: PoolView[] = [];
  let open: PoolView | null = null;
  /** Cursors of the pages shown so far (the first page's is null). */
  let cursors: (string | null)[] = [null];
  let nextCursor: string | null = null;
  let regionsLoaded = false;
  /** The latest listing asked for: an older answer that arrives after it is dropped (filters changed quickly). */
  let listing = 0;
  const armed = new Map<string, ReturnType<typeof setTimeout>>();
  /** The open pool's events socket: which pool, and its close. */
  let live: { poolId: string; close: () => void } | null = null;
  let reopenTimer: ReturnType<typeof setTimeout> | null = null;
  let reloadTimer: ReturnType<typeof setTimeout> | null = null;
  /** The live list's items, newest first. */
  let liveItems: string[] = [];
  /** Where the gateway listens (/health), null: none. */
  let gateway: { host: string | null; port: number } | null = null;

  /** The warnings of a create / PATCH answer (none: the banner goes). */
  const showWarnings = (body: unknown): void => {
    const lines = poolWarningTexts(body);
    warningList.innerHTML = lines.map((l) => `<li>${escapeXml(l)}</li>`).join('');
    show(warningList, lines.length > 0);
  };

  /** The open pool's gateway URLs, when the service runs a gateway. */
  const renderGateway = (): void => {
    const k = deps.key();
    const urls = open === null || k === null ? null : poolGatewayUrls(gateway, win().location.hostname, open.id, k);
    show(gatewayBox, urls !== null);
    setText(byId('pool-gw-http'), urls?.http ?? '');
    setText(byId('pool-gw-socks5'), urls?.socks5 ?? '');
  };

  const key = (): string | null => {
    const k = deps.key();
    if (k === null) deps.onUnauthorized();
    return k;
  };
  const failed = (status: number, body: unknown, where: Elem = err): void => {
    if (status === 401) deps.onUnauthorized();
    else setText(where, errorText(status, body));
  };
  const filters = (): ProxyFilters => {
    const v = (id: string) => byId<InputEl>(id).value;
    return { status: v(filterIds.status), country: v(filterIds.country), anonymity: v(filterIds.anonymity), type: v(filterIds.type), https: v(filterIds.https), sort: v(filterIds.sort) };
  };

  function renderList(): void {
    const now = Date.now();
    tbody.innerHTML = pools.map((p) => poolRowHtml(p, now)).join('');
    show(empty, pools.length === 0);
  }

  async function loadList(): Promise<boolean> {
    const k = key();
    if (k === null) return false;
    const r = await apiGet('/pools', k);
    if (!r.ok) {
      failed(r.status, r.body);
      return false;
    }
    pools = (r.body as { pools: PoolView[] }).pools;
    renderList();
    return true;
  }

  async function loadRegions(): Promise<void> {
    if (regionsLoaded) return;
    regionsLoaded = true;
    const r = await apiGet('/regions');
    if (!r.ok) return;
    const b = r.body as { regions: { code: string; name: string }[]; default: string };
    region.replaceChildren(...b.regions.filter((x) => x.code !== 'test1').map((x) => option(`${x.name} (${x.code})`, x.code)));
    region.value = b.default;
  }

  function renderCards(p: PoolView): void {
    const now = Date.now();
    setText(title, p.name);
    cards.innerHTML = poolCards(p, now)
      .map(([k, v]) => `<div class="card"><dt>${escapeXml(k)}</dt><dd>${escapeXml(v)}</dd></div>`)
      .join('');
  }

  async function loadProxies(): Promise<void> {
    const k = key();
    if (k === null || open === null) return;
    const cursor = cursors[cursors.length - 1] ?? null;
    const mine = ++listing;
    ptbody.setAttribute('aria-busy', 'true');
    const r = await apiGet(`/pools/${open.id}/proxies?${proxiesQuery(filters(), { format: 'json', limit: PAGE, cursor })}`, k);
    if (mine !== listing) return;
    ptbody.setAttribute('aria-busy', 'false');
    if (!r.ok) {
      failed(r.status, r.body);
      return;
    }
    const page = r.body as { proxies: PoolProxyView[]; next_cursor: string | null };
    const now = Date.now();
    ptbody.innerHTML =
      page.proxies.length === 0 ? '<tr><td colspan="9" class="muted">No proxies match these filters.</td></tr>' : page.proxies.map((p) => proxyRowHtml(p, now)).join('');
    nextCursor = page.next_cursor;
    const from = (cursors.length - 1) * PAGE;
    setText(pcount, page.proxies.length === 0 ? '' : `Proxies ${formatCount(from + 1)} to ${formatCount(from + page.proxies.length)}${nextCursor === null ? '' : ' (more on the next page)'}`);
    prev.disabled = cursors.length <= 1;
    next.disabled = nextCursor === null;
  }

  function stopLive(): void {
    if (reopenTimer !== null) clearTimeout(reopenTimer);
    if (reloadTimer !== null) clearTimeout(reloadTimer);
    reopenTimer = null;
    reloadTimer = null;
    live?.close();
    live = null;
  }

  function onEvent(e: unknown): void {
    if (open === null || !isPoolEvent(e, open.id)) return;
    open = applyPoolEvent(open, e);
    renderCards(open);
    pools = pools.map((p) => (p.id === e.pool ? applyPoolEvent(p, e) : p));
    renderList();
    show(liveEmpty, false);
    liveItems = [poolEventHtml(e), ...liveItems].slice(0, MAX_LIVE_EVENTS);
    liveList.innerHTML = liveItems.join('');
    if (changesProxies(e) && reloadTimer === null) {
      reloadTimer = setTimeout(() => {
        reloadTimer = null;
        void loadProxies();
      }, LIVE_RELOAD_MS);
    }
  }

  /** Follows the open pool's events (a socket per pool; the same pool keeps its socket). */
  function followLive(poolId: string): void {
    if (live?.poolId === poolId) return;
    stopLive();
    liveItems = [];
    liveList.innerHTML = '';
    show(liveEmpty, true);
    const k = deps.key();
    if (k === null) return;
    setText(liveState, '(connecting…)');
    const mine = {
      poolId,
      close: openPoolEvents(
        poolId,
        k,
        onEvent,
        () => setText(liveState, '(live)'),
        (_code, reason) => {
          if (live !== mine) return;
          live = null;
          if (reason === 'pool deleted') {
            setText(liveState, '');
            open = null;
            show(detail, false);
            void loadList();
            if (win().location.hash !== '#/pools') win().location.hash = '#/pools';
            return;
          }
          setText(liveState, '(reconnecting…)');
          reopenTimer = setTimeout(() => {
            reopenTimer = null;
            if (open?.id === poolId && !detail.hidden) followLive(poolId);
          }, LIVE_REOPEN_MS);
        },
      ),
    };
    live = mine;
  }

  async function openPool(id: string | null): Promise<void> {
    if (id === null) {
      open = null;
      stopLive();
      show(detail, false);
      return;
    }
    const k = key();
    if (k === null) return;
    const r = await apiGet(`/pools/${encodeURIComponent(id)}`, k);
    if (!r.ok) {
      open = null;
      stopLive();
      show(detail, false);
      failed(r.status, r.body);
      return;
    }
    const switched = open?.id !== id;
    open = r.body as PoolView;
    renderCards(open);
    renderGateway();
    show(detail, true);
    followLive(open.id);
    if (switched) cursors = [null];
    await loadProxies();
  }

  /** Every page of the open pool's listing in `format`, joined (csv: one header row). */
  async function download(format: 'txt' | 'csv' | 'json', button: ButtonEl): Promise<void> {
    const k = key();
    if (k === null || open === null) return;
    const f = filters();
    button.disabled = true;
    const parts: string[] = [];
    const proxies: unknown[] = [];
    let cursor: string | null = null;
    try {
      do {
        const path = `/pools/${open.id}/proxies?${proxiesQuery(f, { format, limit: DOWNLOAD_PAGE, cursor })}`;
        if (format === 'json') {
          const r = await apiGet(path, k);
          if (!r.ok) return failed(r.status, r.body);
          const page = r.body as { proxies: unknown[]; next_cursor: string | null };
          proxies.push(...page.proxies);
          cursor = page.next_cursor;
        } else {
          const r = await apiText(path, k);
          if (!r.ok) return failed(r.status, jsonOrNull(r.text));
          parts.push(format === 'csv' && parts.length > 0 ? r.text.slice(r.text.indexOf('\r\n') + 2) : r.text);
          cursor = r.nextCursor;
        }
      } while (cursor !== null);
    } finally {
      button.disabled = false;
    }
    const text = format === 'json' ? JSON.stringify({ proxies }, null, 2) : parts.join('');
    const type = format === 'json' ? 'application/json' : format === 'csv' ? 'text/csv' : 'text/plain';
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = create<AnchorEl>('a');
    a.href = url;
    a.download = downloadName(open.name, f.status, format);
    a.hidden = true;
    detail.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  // ---- the list's actions -------------------------------------------------------------------

  tbody.addEventListener('click', async (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-act]');
    const id = btn?.dataset.id;
    const act = btn?.dataset.act;
    if (btn === null || btn === undefined || id === undefined || act === undefined) return;
    const k = key();
    if (k === null) return;
    setText(err, '');
    if (act === 'delete' && !armed.has(id)) {
      // two clicks: the first one asks
      btn.textContent = 'Delete? Click again';
      armed.set(
        id,
        setTimeout(() => {
          armed.delete(id);
          btn.textContent = 'Delete';
        }, CONFIRM_MS),
      );
      return;
    }
    btn.disabled = true;
    const r = act === 'delete' ? await apiSend('DELETE', `/pools/${id}`, k) : await apiSend('PATCH', `/pools/${id}`, k, { state: act === 'pause' ? 'paused' : 'active' });
    clearTimeout(armed.get(id));
    armed.delete(id);
    if (!r.ok) {
      btn.disabled = false;
      failed(r.status, r.body);
      return;
    }
    showWarnings(act === 'delete' ? null : r.body);
    if (act === 'delete' && open?.id === id) {
      open = null;
      stopLive();
      show(detail, false);
      if (win().location.hash !== '#/pools') win().location.hash = '#/pools';
    }
    await loadList();
    if (open?.id === id) await openPool(id);
  });

  // ---- the create form ------------------------------------------------------------------------

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = key();
    if (k === null) return;
    const values: PoolFormValues = {
      name: byId<InputEl>('pool-name').value,
      proxies: byId<TextAreaEl>('pool-proxies-text').value,
      type: byId<SelectEl>('pool-type').value,
      region: region.value,
      interval: byId<InputEl>('pool-interval').value,
      timeout: byId<InputEl>('pool-timeout').value,
    };
    const fields: Record<keyof PoolFormValues, string> = { name: 'pool-name', proxies: 'pool-proxies-text', type: 'pool-type', region: 'pool-region', interval: 'pool-interval', timeout: 'pool-timeout' };
    for (const id of Object.values(fields)) byId(id).removeAttribute('aria-invalid');
    setText(created, '');
    const checked = poolCreateBody(values);
    if ('error' in checked) {
      setText(formError, checked.error);
      const field = byId(fields[checked.field]);
      field.setAttribute('aria-invalid', 'true');
      field.focus();
      return;
    }
    setText(formError, '');
    const submit = byId<ButtonEl>('pool-create');
    submit.disabled = true;
    const r = await apiPost('/pools', k, checked.body);
    submit.disabled = false;
    if (!r.ok) {
      failed(r.status, r.body, formError);
      return;
    }
    showWarnings(r.body);
    const p = r.body as PoolView & { submitted: { added: number; total_invalid: number; total_duplicates: number } };
    const skipped = p.submitted.total_invalid + p.submitted.total_duplicates;
    setText(created, `Created “${p.name}” with ${formatCount(p.submitted.added)} proxies${skipped > 0 ? ` (${formatCount(skipped)} invalid or duplicate lines skipped)` : ''}.`);
    byId<InputEl>('pool-name').value = '';
    byId<TextAreaEl>('pool-proxies-text').value = '';
    await loadList();
    win().location.hash = `#/pools/${p.id}`;
  });

  // ---- the open pool's filters, pages and downloads ------------------------------------------

  for (const id of Object.values(filterIds)) {
    byId(id).addEventListener('change', () => {
      cursors = [null];
      void loadProxies();
    });
  }
  next.addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors.push(nextCursor);
    void loadProxies();
  });
  prev.addEventListener('click', () => {
    if (cursors.length <= 1) return;
    cursors.pop();
    void loadProxies();
  });
  for (const format of ['txt', 'csv', 'json'] as const) {
    const b = byId<ButtonEl>(`pd-${format}`);
    b.addEventListener('click', () => void download(format, b));
  }

  return {
    /** The view is shown: the list (and the pool of `#/pools/<id>`, or none). */
    async load(id: string | null): Promise<void> {
      setText(err, '');
      void loadRegions();
      if (await loadList()) await openPool(id);
    },
    /** Where the service's gateway listens (/health `gateway`; null: none): a pool's page shows its URLs. */
    setGateway(at: { host: string | null; port: number } | null): void {
      gateway = at;
      renderGateway();
    },
    /** The view is hidden (another route): the open pool's socket closes; load() opens it again. */
    leave(): void {
      stopLive();
    },
    /** Re-read the list and the open pool. */
    async refresh(): Promise<void> {
      if (await loadList()) {
        if (open !== null) await openPool(open.id);
      }
    },
  };
}
