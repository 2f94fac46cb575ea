/**
 * The dashboard's entry point (bundled by src/web/bundle.ts into /app/app.js):
 * sign-in with an API key (signin-view.ts; then kept in sessionStorage
 * or, when remembered, localStorage; in memory when storage is off), a hash
 * router over the views (#/check, #/results, #/pools and #/pools/<id>,
 * #/webhooks, #/account; sign-in whenever no key is known) that moves focus to each view's heading, and sign-out.
 * GET /health is read once at start (service-info.ts): one machine or a
 * cluster (the region hint and card), the banner for a judge that
 * proxies elsewhere cannot reach, and where the gateway listens (a pool's
 * page shows its URLs). A check still running when the page was
 * reloaded is followed again. The Results tab with nothing to show from
 * this tab (a new sign-in) shows the account's latest result (GET /me).
 * Each view owns its markup and ids (src/web/page.ts composes the page).
 */
import { apiGet, clearKey, loadKey, saveKey } from './api';
import { doc, win, type Elem } from './browser';
import { ACCOUNT_IDS, setupAccountView } from './account-view';
import { CHECK_VIEW_IDS, setupCheckView } from './check-view';
import { byId, setText, show } from './dom';
import { latestResultLink } from './format';
import { keptJob } from './job-follow';
import { POOLS_VIEW_IDS, setupPoolsView } from './pools-view';
import { RESULTS_VIEW_IDS, setupResultsView } from './results-view';
import { gatewayOf, judgeBanner, serviceInfo } from './service-info';
import { SHELL_IDS } from './shell';
import { mountSignin, SIGNIN_IDS } from './signin-view';
import { setupWebhooksView, WEBHOOKS_VIEW_IDS } from './webhooks-view';

const ROUTES = Object.freeze({ check: 'New check', results: 'Results', pools: 'Pools', webhooks: 'Webhooks', account: 'Account' } as const);
type Route = keyof typeof ROUTES | 'signin';
const LAST_RESULT = 'proxycheck.lastResult';
const REFUSED = 'Your API key was refused. Sign in again.';

/** The result link this tab showed last (kept across a reload); null: none, or storage off. */
function lastResult(): string | null {
  try {
    return win().sessionStorage.getItem(LAST_RESULT);
  } catch {
    return null;
  }
}

/** Keeps `link` as this tab's last result (anything else: forgets it). */
function rememberResult(link: unknown): void {
  try {
    if (typeof link === 'string') win().sessionStorage.setItem(LAST_RESULT, link);
    else win().sessionStorage.removeItem(LAST_RESULT);
  } catch {
    // storage off: nothing to restore after a reload
  }
}

class App {
  memKey: string | null = null;
  /** True once a result was shown or is loading (no restore from sessionStorage then). */
  restored = false;
  regionsLoaded = false;
  readonly location = win().location;
  readonly key = () => this.memKey ?? loadKey();
  readonly views: Record<Route, Elem> = {
    signin: byId(SIGNIN_IDS.view),
    check: byId(CHECK_VIEW_IDS.view),
    results: byId(RESULTS_VIEW_IDS.view),
    pools: byId(POOLS_VIEW_IDS.view),
    webhooks: byId(WEBHOOKS_VIEW_IDS.view),
    account: byId(ACCOUNT_IDS.view),
  };
  readonly results = setupResultsView();
  readonly check = setupCheckView({ key: this.key, onUnauthorized: () => this.signOut(REFUSED), onResult: (res) => this.open(res.result_url, () => this.results.showResponse(res)) });
  readonly account = setupAccountView({ key: this.key, onUnauthorized: () => this.signOut(REFUSED), onOpen: (link) => this.open(link, () => this.results.showLink(link)) });
  readonly pools = setupPoolsView({ key: this.key, onUnauthorized: () => this.signOut(REFUSED) });
  readonly webhooks = setupWebhooksView({ key: this.key, onUnauthorized: () => this.signOut(REFUSED) });
  readonly signin = mountSignin((k, remember) => this.signedIn(k, remember));

  /** Shows a result (`show`) in the Results view and remembers its link. */
  open(link: unknown, showIt: () => Promise<boolean>): void {
    this.restored = true;
    rememberResult(link);
    void showIt();
    this.location.hash = '#/results';
  }

  signOut(message = ''): void {
    this.memKey = null;
    clearKey();
    rememberResult(null);
    this.results.clear();
    this.restored = false; // the next sign-in shows its latest result again
    this.signin.say(message);
    if (this.location.hash !== '#/signin') this.location.hash = '#/signin';
    else this.route(true);
  }

  signedIn(k: string, remember: boolean): void {
    this.memKey = k;
    saveKey(k, remember);
    const target = this.location.hash.replace(/^#\/?/, '').split('/')[0] ?? '';
    if (target in ROUTES) this.route(true);
    else this.location.hash = '#/check';
  }

  /** GET /health once: the region hint and card, the gateway's URLs, the judge banner. */
  readHealth(): void {
    void apiGet('/health').then((h) => {
      const info = serviceInfo(h.body);
      this.check.setService(info);
      this.results.setService(info);
      this.pools.setGateway(gatewayOf(h.body));
      const banner = judgeBanner(info);
      const el = byId(SHELL_IDS.banner);
      setText(el, banner ?? '');
      show(el, banner !== null);
    });
  }

  /** The Results tab with nothing shown yet: this tab's last result, or the account's latest. */
  restoreResult(): void {
    this.restored = true;
    const link = lastResult();
    if (link) return void this.results.showLink(link);
    // nothing from this tab (a new sign-in): the account's latest check that still has its result
    const k = this.key();
    if (k === null) return;
    void apiGet('/me', k).then((r) => {
      const latest = r.ok ? latestResultLink(r.body) : null;
      if (latest !== null && !this.results.hasResult() && this.key() === k) void this.results.showLink(latest);
    });
  }

  /** Shows the view of the hash ("#/pools/<id>": the route is the first segment, the rest the view's). */
  route(focus: boolean): void {
    const [wanted = '', ...rest] = this.location.hash.replace(/^#\/?/, '').split('/');
    const name: Route = this.key() === null ? 'signin' : wanted in ROUTES ? (wanted as Route) : 'check';
    for (const [n, el] of Object.entries(this.views)) show(el, n === name);
    const nav = byId(SHELL_IDS.nav);
    show(nav, name !== 'signin');
    for (const a of nav.querySelectorAll('a[data-route]')) {
      if (a.dataset.route === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    doc().title = `${name === 'signin' ? 'Sign in' : ROUTES[name]} · Proxy checker`;
    if (name !== 'signin' && !this.regionsLoaded) {
      this.regionsLoaded = true;
      void this.check.loadRegions();
    }
    if (name === 'account') void this.account.load();
    if (name === 'pools') void this.pools.load(rest[0] ?? null);
    else this.pools.leave();
    if (name === 'webhooks') void this.webhooks.load();
    else this.webhooks.leave();
    if (name === 'results') this.results.redraw();
    if (name === 'results' && !this.restored && !this.results.hasResult()) this.restoreResult();
    if (focus) this.views[name].querySelector('h1')?.focus();
  }
}

function boot(): void {
  const app = new App();
  app.readHealth();
  byId(SHELL_IDS.signout).addEventListener('click', () => app.signOut('You are signed out.'));
  win().addEventListener('hashchange', () => app.route(true));
  app.route(false);
  // a check this tab started is still running (the page was reloaded): follow it again
  if (app.key() !== null && keptJob() !== null) {
    if (app.location.hash !== '#/check') app.location.hash = '#/check';
    void app.check.resume();
  }
}

if (doc().readyState === 'loading') doc().addEventListener('DOMContentLoaded', boot);
else boot();
