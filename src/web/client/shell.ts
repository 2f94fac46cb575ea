/**
 * The page's frame around the views: the header with the brand and the
 * navigation (hidden until signed in) with Sign out, and the banner for a
 * judge that proxies elsewhere cannot reach (filled from /health).
 */
export const DASHBOARD_TITLE = 'Proxy checker';

export const SHELL_IDS = Object.freeze({ nav: 'nav', signout: 'signout', banner: 'judge-banner', main: 'main' });

export function shellHeaderHtml(): string {
  return `<header class="top">
  <a class="brand" href="#/check"><svg viewBox="0 0 24 24" aria-hidden="true" class="logo"><circle cx="12" cy="12" r="10"/><path d="M2 12h20M12 2c3 3 3 17 0 20M12 2c-3 3-3 17 0 20"/></svg><span>${DASHBOARD_TITLE}</span></a>
  <nav id="nav" aria-label="Main" hidden>
    <ul>
      <li><a href="#/check" data-route="check">New check</a></li>
      <li><a href="#/results" data-route="results">Results</a></li>
      <li><a href="#/pools" data-route="pools">Pools</a></li>
      <li><a href="#/webhooks" data-route="webhooks">Webhooks</a></li>
      <li><a href="#/account" data-route="account">Account</a></li>
      <li><button id="signout" type="button" class="linklike">Sign out</button></li>
    </ul>
  </nav>
</header>`;
}

/** The opening of <main> with the judge banner and the no-script notice. */
export function shellMainOpenHtml(): string {
  return `<main id="main" tabindex="-1">
<p id="judge-banner" class="banner" role="status" hidden></p>
<noscript><p class="error">This dashboard needs JavaScript. The API works without it: see <a href="/docs">/docs</a>.</p></noscript>`;
}
