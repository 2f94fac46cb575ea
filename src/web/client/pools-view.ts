/**
 * The "Pools" view (#/pools, #/pools/<id>), composed of its regions:
 * the list (pools-list.ts: pause / resume, delete in two clicks), the open
 * pool (pool-cards.ts: its cards and gateway URLs; pool-live.ts: its live
 * events over `/ws?pool=`; pool-downloads.ts; pool-proxies.ts: filters,
 * table, pages) and the create form (pool-form.ts). This module holds what
 * they share: the pools, the open one, the page's error line and warnings.
 *
 * Live: each event of the open pool updates the cards' and the list's
 * counts (and the state on a pause or resume) at once, and a change of
 * verdicts re-reads the proxies table (at most once every LIVE_RELOAD_MS).
 * "pool deleted" closes the pool. Leaving the pool (another pool, the list,
 * another view) closes its feed.
 *
 * A create or PATCH answer's `warnings` (`balance_runs_out`: the pools cost
 * more checks a day than the balance) show in a banner over the view until
 * the next change. Pure parts: pool-format.ts.
 */
import { apiGet, apiSend } from './api';
import { win } from './browser';
import { byId, setText, show } from './dom';
import { applyPoolEvent, changesProxies, poolWarningTexts, type PoolEventView, type PoolView } from './pool-format';
import { mountPoolCards, poolCardsHtml, type GatewayAt } from './pool-cards';
import { mountPoolDownloads, poolDownloadsHtml } from './pool-downloads';
import { mountPoolForm, poolFormHtml } from './pool-form';
import { mountPoolLive, poolLiveHtml } from './pool-live';
import { mountPoolProxies, poolFilters, poolProxiesHtml } from './pool-proxies';
import { mountPoolsList, poolsListHtml, type PoolAction } from './pools-list';
import { escapeXml } from './svg';
import { viewContext, type ViewContext, type ViewDeps } from './view-context';

export const POOLS_VIEW_IDS = Object.freeze({ view: 'view-pools', error: 'pools-error', warnings: 'pool-warnings', detail: 'pool-detail' });

const LIVE_RELOAD_MS = 1000;

export function poolsViewHtml(): string {
  const detail = [`  <section id="pool-detail" class="panel" aria-labelledby="pool-h" hidden>`, poolCardsHtml(), poolLiveHtml(), poolDownloadsHtml(), poolProxiesHtml(), `  </section>`].join('\n');
  return [`<section id="view-pools" class="view" aria-labelledby="pools-h" hidden>
  <h1 id="pools-h" tabindex="-1">Pools</h1>
  <p class="hint">A pool is a list of proxies this service keeps checked on a schedule: working ones every interval, failing ones less often. Each proxy checked costs one check.</p>
  <p id="pools-error" class="error" role="alert"></p>
  <ul id="pool-warnings" class="banner" role="status" hidden></ul>`, poolsListHtml(), '', detail, '', poolFormHtml(), '</section>'].join('\n');
}

export type PoolsViewDeps = ViewDeps;

/** The view's shared state (the pools, the open one, the gateway) and its regions, wired together. */
class PoolsPage {
  readonly err = byId(POOLS_VIEW_IDS.error);
  readonly detail = byId(POOLS_VIEW_IDS.detail);
  readonly warningList = byId(POOLS_VIEW_IDS.warnings);
  pools: PoolView[] = [];
  open: PoolView | null = null;
  gateway: GatewayAt = null;
  reloadTimer: ReturnType<typeof setTimeout> | null = null;
  readonly cards = mountPoolCards();
  readonly proxies: ReturnType<typeof mountPoolProxies>;
  readonly list = mountPoolsList((action, id) => this.act(action, id));
  readonly live = mountPoolLive({ onEvent: (e) => this.onEvent(e), onDeleted: () => this.closePool(true) });
  readonly form: ReturnType<typeof mountPoolForm>;

  constructor(readonly ctx: ViewContext) {
    this.proxies = mountPoolProxies(ctx, this.err);
    this.form = mountPoolForm(ctx, async (created) => {
      this.showWarnings(created);
      await this.loadList();
      win().location.hash = `#/pools/${created.id}`;
    });
    mountPoolDownloads(ctx, () => this.open, poolFilters, this.detail, this.err);
  }

  /** The warnings of a create / PATCH answer (none: the banner goes). */
  showWarnings(body: unknown): void {
    const lines = poolWarningTexts(body);
    this.warningList.innerHTML = lines.map((l) => `<li>${escapeXml(l)}</li>`).join('');
    show(this.warningList, lines.length > 0);
  }

  async loadList(): Promise<boolean> {
    const k = this.ctx.key();
    if (k === null) return false;
    const r = await apiGet('/pools', k);
    if (!r.ok) {
      this.ctx.failed(r.status, r.body, this.err);
      return false;
    }
    this.pools = (r.body as { pools: PoolView[] }).pools;
    this.list.render(this.pools);
    return true;
  }

  /** The open pool's feed and pending re-read stop (the view is left, or the pool closes). */
  quiet(): void {
    this.live.stop();
    if (this.reloadTimer !== null) clearTimeout(this.reloadTimer);
    this.reloadTimer = null;
  }

  /** No pool open; `toList`: back to #/pools (the open one is gone) and the list read again. */
  closePool(toList: boolean): void {
    this.open = null;
    this.quiet();
    this.proxies.close();
    show(this.detail, false);
    if (!toList) return;
    void this.loadList();
    if (win().location.hash !== '#/pools') win().location.hash = '#/pools';
  }

  onEvent(e: PoolEventView): void {
    if (this.open === null) return;
    this.open = applyPoolEvent(this.open, e);
    this.cards.render(this.open);
    this.pools = this.pools.map((p) => (p.id === e.pool ? applyPoolEvent(p, e) : p));
    this.list.render(this.pools);
    if (changesProxies(e) && this.reloadTimer === null) {
      this.reloadTimer = setTimeout(() => {
        this.reloadTimer = null;
        void this.proxies.reload();
      }, LIVE_RELOAD_MS);
    }
  }

  async openPool(id: string | null): Promise<void> {
    if (id === null) return this.closePool(false);
    const k = this.ctx.key();
    if (k === null) return;
    const r = await apiGet(`/pools/${encodeURIComponent(id)}`, k);
    if (!r.ok) {
      this.closePool(false);
      return this.ctx.failed(r.status, r.body, this.err);
    }
    this.open = r.body as PoolView;
    this.cards.render(this.open);
    this.cards.renderGateway(this.open, this.gateway, this.ctx.peekKey());
    show(this.detail, true);
    this.live.follow(this.open.id, this.ctx.peekKey());
    await this.proxies.show(this.open.id, (this.open.customUrls ?? []).map((t) => t.name));
  }

  /** A list action the user confirmed; false when the service refused it. */
  async act(action: PoolAction, id: string): Promise<boolean> {
    const k = this.ctx.key();
    if (k === null) return false;
    setText(this.err, '');
    const r = action === 'delete' ? await apiSend('DELETE', `/pools/${id}`, k) : await apiSend('PATCH', `/pools/${id}`, k, { state: action === 'pause' ? 'paused' : 'active' });
    if (!r.ok) {
      this.ctx.failed(r.status, r.body, this.err);
      return false;
    }
    this.showWarnings(action === 'delete' ? null : r.body);
    if (action === 'delete' && this.open?.id === id) {
      this.closePool(false);
      if (win().location.hash !== '#/pools') win().location.hash = '#/pools';
    }
    await this.loadList();
    if (this.open?.id === id) await this.openPool(id);
    return true;
  }
}

export function setupPoolsView(deps: PoolsViewDeps) {
  const page = new PoolsPage(viewContext(deps));
  return {
    /** The view is shown: the list (and the pool of `#/pools/<id>`, or none). */
    async load(id: string | null): Promise<void> {
      setText(page.err, '');
      void page.form.loadRegions();
      if (await page.loadList()) await page.openPool(id);
    },
    /** Where the service's gateway listens (/health `gateway`; null: none): a pool's page shows its URLs. */
    setGateway(at: GatewayAt): void {
      page.gateway = at;
      page.cards.renderGateway(page.open, at, page.ctx.peekKey());
    },
    /** The view is hidden (another route): the open pool's feed closes; load() opens it again. */
    leave(): void {
      page.quiet();
    },
    /** Re-read the list and the open pool. */
    async refresh(): Promise<void> {
      if ((await page.loadList()) && page.open !== null) await page.openPool(page.open.id);
    },
  };
}
