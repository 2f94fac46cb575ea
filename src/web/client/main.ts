/// <reference lib="dom" />
/**
 * The dashboard's entry point (bundled by src/web/bundle.ts into /app/app.js):
 * sign-in with an API key (checked with GET /me, then kept in sessionStorage
 * or, when remembered, localStorage; in memory when storage is off), a hash
 * router over the views (#/check, #/results, #/account; sign-in whenever no
 * key is known) that moves focus to each view's heading, and sign-out.
 */
import { apiGet, clearKey, loadKey, saveKey } from './api';
import { setupAccountView } from './account-view';
import { setupCheckView } from './check-view';
import { byId, setText, show } from './dom';
import { errorText } from './format';
import { setupResultsView } from './results-view';

const ROUTES = Object.freeze({ check: 'New check', results: 'Results', account: 'Account' } as const);
type Route = keyof typeof ROUTES | 'signin';
const LAST_RESULT = 'proxycheck.lastResult';

function boot(): void {
  let memKey: string | null = null;
  const key = () => memKey ?? loadKey();

  const nav = byId('nav');
  const views: Record<Route, HTMLElement> = {
    signin: byId('view-signin'),
    check: byId('view-check'),
    results: byId('view-results'),
    account: byId('view-account'),
  };

  const remember = (link: unknown) => {
    try {
      if (typeof link === 'string') sessionStorage.setItem(LAST_RESULT, link);
      else sessionStorage.removeItem(LAST_RESULT);
    } catch {
      // storage off: nothing to restore after a reload
    }
  };

  const signOut = (message = '') => {
    memKey = null;
    clearKey();
    remember(null);
    results.clear();
    setText(byId('signin-error'), message);
    if (location.hash !== '#/signin') location.hash = '#/signin';
    else route(true);
  };

  const results = setupResultsView();
  const check = setupCheckView({
    key,
    onUnauthorized: () => signOut('Your API key was refused. Sign in again.'),
    onResult: (res) => {
      remember(res.result_url);
      void results.showResponse(res);
      location.hash = '#/results';
    },
  });
  const account = setupAccountView({
    key,
    onUnauthorized: () => signOut('Your API key was refused. Sign in again.'),
    onOpen: (link) => {
      remember(link);
      void results.showLink(link);
      location.hash = '#/results';
    },
  });

  let regionsLoaded = false;
  let restored = false;
  function route(focus: boolean): void {
    const wanted = location.hash.replace(/^#\/?/, '');
    let name: Route = wanted in ROUTES ? (wanted as Route) : 'check';
    if (key() === null) name = 'signin';
    for (const [n, el] of Object.entries(views)) show(el, n === name);
    show(nav, name !== 'signin');
    for (const a of nav.querySelectorAll('a[data-route]')) {
      if ((a as HTMLElement).dataset.route === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = `${name === 'signin' ? 'Sign in' : ROUTES[name]} · Proxy checker`;
    if (name !== 'signin' && !regionsLoaded) {
      regionsLoaded = true;
      void check.loadRegions();
    }
    if (name === 'account') void account.load();
    if (name === 'results' && !restored && !results.hasResult()) {
      restored = true;
      let link: string | null = null;
      try {
        link = sessionStorage.getItem(LAST_RESULT);
      } catch {
        link = null;
      }
      if (link) void results.showLink(link);
    }
    if (focus) views[name].querySelector<HTMLElement>('h1')?.focus();
  }

  const form = byId<HTMLFormElement>('signin-form');
  const input = byId<HTMLInputElement>('key');
  const rememberBox = byId<HTMLInputElement>('remember');
  const signinError = byId('signin-error');
  const submit = byId<HTMLButtonElement>('signin-submit');
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
    const target = location.hash.replace(/^#\/?/, '');
    if (target in ROUTES) route(true);
    else location.hash = '#/check';
  });
  byId('signout').addEventListener('click', () => signOut('You are signed out.'));
  window.addEventListener('hashchange', () => route(true));
  route(false);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
