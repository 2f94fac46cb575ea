/**
 * The dashboard's entry point (bundled by src/web/bundle.ts into /app/app.js):
 * sign-in with an API key (checked with GET /me, then kept in sessionStorage
 * or, when remembered, localStorage; in memory when storage is off), a hash
 * router over the views (#/check, #/results, #/pools and #/pools/<id>,
 * #/webhooks, #/account; sign-in whenever no key is known) that moves focus to each view's heading, and sign-out.
 * GET /health is read once at start (service-info.ts): one machine or a
 * cluster (the region hint and card), the banner for a judge that
 * proxies elsewhere cannot reach, and where the gateway listens (a pool's
 * page shows its URLs). A check still running when the page was
 * reloaded is followed again. The Results tab with nothing to show from
 * this tab (a new sign-in) shows the account's latest result (GET /me).
 */
import { apiGet, clearKey, loadKey, saveKey } from './api';
import { doc, win, type ButtonEl, type Elem, type InputEl } from './browser';
import { setupAccountView } from './account-view';
import { setupCheckView } from './check-view';
import { byId, setText, show } from './dom';
import { errorText } from './format';
import { keptJob } from './job-follow';
import { setupPoolsView } from './pools-view';
import { setupResultsView } from './results-view';
import { setupWebhooksView } from './webhooks-view';
import { gatewayOf, judgeBanner, serviceInfo } from './service-info';
import { latestResultLink } from './format';

const ROUTES = Object.freeze({ check: 'New check', results: 'Results', pools: 'Pools', webhooks: 'Webhooks', account: 'Account' } as const);
type Route = keyof typeof ROUTES | 'signin';
const LAST_RESULT = 'proxycheck.lastResult';

function boot(): void {
  let memKey: string | null = null;
  const key = () => memKey ?? loadKey();
  /** True once a result was shown or is loading (no restore from sessionStorage then). */
  let restored = false;

  const nav = byId('nav');
  const location = win().location;
  const views: Record<Route, Elem> = {
    signin: byId('view-signin'),
    check: byId('view-check'),
    results: byId('view-results'),
    pools: byId('view-pools'),
    webhooks: byId('view-webhooks'),
    account: byId('view-account'),
  };

  const remember = (link: unknown) => {
    try {
      if (typeof link === 'string') win().sessionStorage.setItem(LAST_RESULT, link);
      else win().sessionStorage.removeItem(LAST_RESULT);
    } catch {
      // storage off: nothing to restore after a reload
    }
  };

  const signOut = (message = '') => {
    memKey = null;
    clearKey();
    remember(null);
    results.clear();
    restored = false; // the next sign-in shows its latest result again
    setText(byId('signin-error'), message);
    if (location.hash !== '#/signin') location.hash = '#/signin';
    else route(true);
  };

  const results = setupResultsView();
  const check = setupCheckView({
    key,
    onUnauthorized: () => signOut('Your API key was refused. Sign in again.'),
    onResult: (res) => {
      restored = true;
      remember(res.result_url);
      void results.showResponse(res);
      location.hash = '#/results';
    },
  });
  const account = setupAccountView({
    key,
    onUnauthorized: () => signOut('Your API key was refused. Sign in again.'),
    onOpen: (link) => {
      restored = true;
      remember(link);
      void results.showLink(link);
      location.hash = '#/results';
    },
  });

  const pools = setupPoolsView({ key, onUnauthorized: () => signOut('Your API key was refused. Sign in again.') });
  const webhooks = setupWebhooksView({ key, onUnauthorized: () => signOut('Your API key was refused. Sign in again.') });

  void apiGet('/health').then((h) => {
    const info = serviceInfo(h.body);
    check.setService(info);
    results.setService(info);
    pools.setGateway(gatewayOf(h.body));
    const banner = judgeBanner(info);
    const el = byId('judge-banner');
    setText(el, banner ?? '');
    show(el, banner !== null);
  });

  let regionsLoaded = false;
  function route(focus: boolean): void {
    // "#/pools/<id>": the route is the first segment, the rest the view's
    const [wanted = '', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
    let name: Route = wanted in ROUTES ? (wanted as Route) : 'check';
    if (key() === null) name = 'signin';
    for (const [n, el] of Object.entries(views)) show(el, n === name);
    show(nav, name !== 'signin');
    for (const a of nav.querySelectorAll('a[data-route]')) {
      if (a.dataset.route === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    doc().title = `${name === 'signin' ? 'Sign in' : ROUTES[name]} · Proxy checker`;
    if (name !== 'signin' && !regionsLoaded) {
      regionsLoaded = true;
      void check.loadRegions();
    }
    if (name === 'account') void account.load();
    if (name === 'pools') void pools.load(rest[0] ?? null);
    else pools.leave();
    if (name === 'webhooks') void webhooks.load();
    else webhooks.leave();
    if (name === 'results') results.redraw();
    if (name === 'results' && !restored && !results.hasResult()) {
      restored = true;
      let link: string | null = null;
      try {
        link = win().sessionStorage.getItem(LAST_RESULT);
      } catch {
        link = null;
      }
      if (link) void results.showLink(link);
      else {
        // nothing from this tab (a new sign-in): the account's latest check that still has its result
        const k = key();
        if (k !== null) {
          void apiGet('/me', k).then((r) => {
            const latest = r.ok ? latestResultLink(r.body) : null;
            if (latest !== null && !results.hasResult() && key() === k) void results.showLink(latest);
          });
        }
      }
    }
    if (focus) views[name].querySelector('h1')?.focus();
  }

  const form = byId('signin-form');
  const input = byId<InputEl>('key');
  const rememberBox = byId<InputEl>('remember');
  const signinError = byId('signin-error');
  const submit = byId<ButtonEl>('signin-submit');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = input.value.trim();
    if (k === '') {
      setText(signinError, 'Enter your API key.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    submit.disabled = true;
    setText(signinError, '');
    const r = await apiGet('/me', k);
    submit.disabled = false;
    if (!r.ok) {
      setText(signinError, r.status === 401 ? 'That API key is not valid.' : errorText(r.status, r.body));
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    input.removeAttribute('aria-invalid');
    input.value = '';
    memKey = k;
    saveKey(k, rememberBox.checked);
    const target = location.hash.replace(/^#\/?/, '').split('/')[0] ?? '';
    if (target in ROUTES) route(true);
    else location.hash = '#/check';
  });
  byId('signout').addEventListener('click', () => signOut('You are signed out.'));
  win().addEventListener('hashchange', () => route(true));
  route(false);
  // a check this tab started is still running (the page was reloaded): follow it again
  if (key() !== null && keptJob() !== null) {
    if (location.hash !== '#/check') location.hash = '#/check';
    void check.resume();
  }
}

if (doc().readyState === 'loading') doc().addEventListener('DOMContentLoaded', boot);
else boot();
