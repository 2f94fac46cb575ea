/**
 * An open pool's proxies: the filters (status, country, anonymity,
 * protocol, HTTPS, target, sort), the table (a column per target of the pool), (uptime 24 h / 7 d, latency, last
 * change, ...) and its pages over the API's cursor (cursor-stack.ts). An
 * older answer that arrives after a newer listing was asked for is dropped
 * (filters changed quickly).
 */
import { apiGet } from './api';
import type { ButtonEl, Elem, InputEl, TableEl } from './browser';
import { byId, setText } from './dom';
import { CursorStack } from './cursor-stack';
import { escapeXml } from './svg';
import { proxiesQuery, proxyRowHtml, targetHeadHtml, type PoolProxyView, type ProxyFilters } from './pool-format';
import { formatCount } from './svg';
import type { ViewContext } from './view-context';

/** The filters by the ProxyFilters field each sets. */
export const POOL_FILTER_IDS: Readonly<Record<keyof ProxyFilters, string>> = Object.freeze({ status: 'pf-status', country: 'pf-country', anonymity: 'pf-anon', type: 'pf-type', https: 'pf-https', target: 'pf-target', sort: 'pf-sort' });
export const POOL_PROXIES_IDS = Object.freeze({ table: 'pool-proxies', count: 'pp-count', prev: 'pp-prev', next: 'pp-next', ...POOL_FILTER_IDS });

/** The table's header row: a column per target of the pool before Error. */
function proxiesHeadHtml(targets: readonly string[]): string {
  const cols = ['Proxy', 'Status', 'Protocol', 'Uptime 24 h', 'Uptime 7 d', 'Latency', 'Last change', 'Country', 'Anonymity'];
  return `<tr>${cols.map((c) => `<th scope="col">${c}</th>`).join('')}${targetHeadHtml(targets)}<th scope="col">Error</th></tr>`;
}

const PAGE = 50;

export function poolProxiesHtml(): string {
  return `    <div class="filters pool-filters" role="search" aria-label="Filter the pool's proxies">
      <div class="field"><label for="pf-status">Status</label><select id="pf-status"><option value="working">Working now</option><option value="failed">Failed</option><option value="unchecked">Not checked yet</option><option value="">All</option></select></div>
      <div class="field"><label for="pf-country">Country</label><input id="pf-country" type="text" maxlength="2" autocomplete="off" spellcheck="false" placeholder="DE" aria-describedby="pf-country-hint"><p id="pf-country-hint" class="visually-hidden">Two-letter country code</p></div>
      <div class="field"><label for="pf-anon">Anonymity</label><select id="pf-anon"><option value="">All</option><option value="elite">Elite</option><option value="anonymous">Anonymous</option><option value="transparent">Transparent</option></select></div>
      <div class="field"><label for="pf-type">Protocol</label><select id="pf-type"><option value="">All</option><option value="http">HTTP</option><option value="socks4">SOCKS4</option><option value="socks5">SOCKS5</option></select></div>
      <div class="field"><label for="pf-https">HTTPS</label><select id="pf-https"><option value="">All</option><option value="true">Yes</option><option value="false">No</option></select></div>
      <div class="field"><label for="pf-target">Target</label><select id="pf-target"><option value="">Any</option></select></div>
      <div class="field"><label for="pf-sort">Sort</label><select id="pf-sort"><option value="latency">Fastest first</option><option value="uptime">Highest uptime first</option><option value="checked">Checked last first</option></select></div>
    </div>
    <p id="pp-count" class="hint" aria-live="polite"></p>
    <div class="table-wrap" role="region" aria-labelledby="pool-h" tabindex="0">
      <table id="pool-proxies"><thead>${proxiesHeadHtml([])}</thead><tbody></tbody></table>
    </div>
    <div class="pager">
      <button type="button" id="pp-prev" class="secondary">Previous<span class="visually-hidden"> page</span></button>
      <button type="button" id="pp-next" class="secondary">Next<span class="visually-hidden"> page</span></button>
    </div>`;
}

/** The filters as set now. */
export function poolFilters(): ProxyFilters {
  const v = (field: keyof ProxyFilters) => byId<InputEl>(POOL_FILTER_IDS[field]).value;
  return { status: v('status'), country: v('country'), anonymity: v('anonymity'), type: v('type'), https: v('https'), target: v('target'), sort: v('sort') };
}

/** `err`: where a failed listing's message shows. */
export function mountPoolProxies(ctx: ViewContext, err: Elem) {
  const ids = POOL_PROXIES_IDS;
  const tbody = byId<TableEl>(ids.table).tBodies[0]!;
  const count = byId(ids.count);
  const prev = byId<ButtonEl>(ids.prev);
  const next = byId<ButtonEl>(ids.next);
  const pages = new CursorStack();
  let poolId: string | null = null;
  let listing = 0;
  /** The open pool's target names: a filter option and a column each. */
  let targets: readonly string[] = [];

  const setTargets = (names: readonly string[]): void => {
    if (names.join('\u0000') === targets.join('\u0000')) return;
    targets = names;
    const select = byId<InputEl>(ids.target);
    const keep = names.includes(select.value) ? select.value : '';
    select.innerHTML = `<option value="">Any</option>${names.map((n) => `<option value="${escapeXml(n)}">${escapeXml(n)}</option>`).join('')}`;
    select.value = keep;
    const head = byId<TableEl>(ids.table).tHead;
    if (head !== null) head.innerHTML = proxiesHeadHtml(names);
  };

  const render = (page: { proxies: PoolProxyView[]; next_cursor: string | null }): void => {
    const now = Date.now();
    tbody.innerHTML =
      page.proxies.length === 0 ? `<tr><td colspan="${10 + targets.length}" class="muted">No proxies match these filters.</td></tr>` : page.proxies.map((p) => proxyRowHtml(p, now, targets)).join('');
    pages.answered(page.next_cursor);
    const from = pages.index * PAGE;
    setText(count, page.proxies.length === 0 ? '' : `Proxies ${formatCount(from + 1)} to ${formatCount(from + page.proxies.length)}${pages.hasNext ? ' (more on the next page)' : ''}`);
    prev.disabled = !pages.hasPrevious;
    next.disabled = !pages.hasNext;
  };

  const load = async (): Promise<void> => {
    const k = ctx.key();
    if (k === null || poolId === null) return;
    const mine = ++listing;
    tbody.setAttribute('aria-busy', 'true');
    const r = await apiGet(`/pools/${poolId}/proxies?${proxiesQuery(poolFilters(), { format: 'json', limit: PAGE, cursor: pages.current })}`, k);
    if (mine !== listing) return;
    tbody.setAttribute('aria-busy', 'false');
    if (!r.ok) return ctx.failed(r.status, r.body, err);
    render(r.body as { proxies: PoolProxyView[]; next_cursor: string | null });
  };

  for (const id of Object.values(POOL_FILTER_IDS)) {
    byId(id).addEventListener('change', () => {
      pages.reset();
      void load();
    });
  }
  next.addEventListener('click', () => {
    if (pages.forward()) void load();
  });
  prev.addEventListener('click', () => {
    if (pages.back()) void load();
  });

  return {
    /** Shows `id`'s proxies (another pool than before: from the first page); `targetNames`: the pool's targets. */
    async show(id: string, targetNames: readonly string[] = []): Promise<void> {
      if (id !== poolId) pages.reset();
      poolId = id;
      setTargets(targetNames);
      await load();
    },
    /** Reads the page shown again. */
    reload: load,
    /** No pool open: the next one shown starts from its first page. */
    close(): void {
      poolId = null;
      listing++;
    },
  };
}
