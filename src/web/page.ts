/**
 * The dashboard's one HTML page (served at /app): the header and navigation,
 * a banner for a judge that proxies elsewhere cannot reach (filled from
 * /health), and the five views (sign-in, with how to get a key; new check
 * with live progress; results; pools; account) as static, labelled markup. The script (/app/app.js, built from
 * src/web/client) shows one view at a time, wires the forms and fills in the
 * data. No inline script or style: the page is served with a strict CSP.
 */

import { poolsViewHtml } from './client/pools-view';

export const DASHBOARD_TITLE = 'Proxy checker';

export function dashboardPage(version: string): string {
  const v = encodeURIComponent(version);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${DASHBOARD_TITLE}</title>
<link rel="icon" href="/app/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app/app.css?v=${v}">
<script type="module" src="/app/app.js?v=${v}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="#/check"><svg viewBox="0 0 24 24" aria-hidden="true" class="logo"><circle cx="12" cy="12" r="10"/><path d="M2 12h20M12 2c3 3 3 17 0 20M12 2c-3 3-3 17 0 20"/></svg><span>${DASHBOARD_TITLE}</span></a>
  <nav id="nav" aria-label="Main" hidden>
    <ul>
      <li><a href="#/check" data-route="check">New check</a></li>
      <li><a href="#/results" data-route="results">Results</a></li>
      <li><a href="#/pools" data-route="pools">Pools</a></li>
      <li><a href="#/account" data-route="account">Account</a></li>
      <li><button id="signout" type="button" class="linklike">Sign out</button></li>
    </ul>
  </nav>
</header>
<main id="main" tabindex="-1">
<p id="judge-banner" class="banner" role="status" hidden></p>
<noscript><p class="error">This dashboard needs JavaScript. The API works without it: see <a href="/docs">/docs</a>.</p></noscript>

<section id="view-signin" class="view narrow" aria-labelledby="signin-h" hidden>
  <h1 id="signin-h" tabindex="-1">Sign in</h1>
  <form id="signin-form" class="panel" novalidate>
    <div class="field">
      <label for="key">API key</label>
      <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required aria-describedby="key-hint signin-error">
      <p id="key-hint" class="hint">Your key stays in this browser and is sent only to this service.</p>
    </div>
    <div class="checkbox">
      <input id="remember" name="remember" type="checkbox">
      <label for="remember">Remember me on this device</label>
    </div>
    <p id="signin-error" class="error" role="alert"></p>
    <button type="submit" class="primary" id="signin-submit">Sign in</button>
  </form>
  <section class="panel" aria-labelledby="nokey-h">
    <h2 id="nokey-h">No key, or lost it?</h2>
    <p class="hint">Keys are issued by whoever runs this service, on its machine: <code>npm run admin -- issue-key --email you@example.com</code> prints a new one (<code>npm run admin -- list-accounts</code> lists the accounts). A new installation prints its demo account's key once, in the log of its first start.</p>
  </section>
</section>

<section id="view-check" class="view" aria-labelledby="check-h" hidden>
  <h1 id="check-h" tabindex="-1">New check</h1>
  <form id="check-form" class="panel" novalidate>
    <div class="field">
      <label for="proxies">Proxies</label>
      <p id="proxies-hint" class="hint">One per line: <code>host:port</code>, <code>user:pass@host:port</code> or <code>host:port:user:pass</code>. Lines starting with # are ignored.</p>
      <textarea id="proxies" name="proxies" rows="9" spellcheck="false" autocomplete="off" aria-describedby="proxies-hint proxies-count" placeholder="203.0.113.7:8080&#10;user:pass@198.51.100.2:3128"></textarea>
      <p id="proxies-count" class="hint">0 proxies</p>
    </div>
    <div class="field">
      <label for="file">Or upload a list</label>
      <input id="file" name="file" type="file" accept=".txt,.csv,.list,text/plain">
    </div>
    <div class="row">
      <div class="field">
        <label for="type">Type</label>
        <select id="type" name="type">
          <option value="http">HTTP</option>
          <option value="socks4">SOCKS4</option>
          <option value="socks5">SOCKS5</option>
          <option value="auto">Auto (try all three)</option>
        </select>
      </div>
      <div class="field">
        <label for="region">Region</label>
        <select id="region" name="region" aria-describedby="region-hint"><option value="us1">Washington DC, USA</option></select>
        <p id="region-hint" class="hint" hidden>This service runs on one machine: every region probes from it.</p>
      </div>
      <div class="field">
        <label for="timeout">Timeout (ms)</label>
        <input id="timeout" name="timeout" type="number" inputmode="numeric" min="1000" max="20000" step="500" value="2000" required aria-describedby="timeout-hint">
        <p id="timeout-hint" class="hint">1000 to 20000</p>
      </div>
      <div class="field">
        <label for="samples">Samples per proxy</label>
        <input id="samples" name="samples" type="number" inputmode="numeric" min="1" max="10" step="1" value="1" required aria-describedby="samples-hint">
        <p id="samples-hint" class="hint">1 to 10, one check each; more than 1 shows rotating exits</p>
      </div>
    </div>
    <fieldset class="custom-urls">
      <legend>Custom URLs <span class="hint">(optional)</span></legend>
      <p class="hint" id="cu-hint">Working proxies are also tried against these URLs. Status codes default to 200.</p>
      <div id="cu-rows"></div>
      <button type="button" id="cu-add" class="secondary">Add a URL</button>
    </fieldset>
    <p id="check-error" class="error" role="alert"></p>
    <button type="submit" class="primary" id="start">Start check</button>
  </form>

  <section id="progress" class="panel" aria-labelledby="progress-h" hidden>
    <h2 id="progress-h">Progress</h2>
    <progress id="p-bar" max="100" value="0" aria-labelledby="progress-h" aria-describedby="p-message"></progress>
    <dl class="stats">
      <div><dt>Checked</dt><dd id="p-checked">0 of 0</dd></div>
      <div><dt>Working so far</dt><dd id="p-working">0</dd></div>
      <div><dt>Time left</dt><dd id="p-eta">estimating…</dd></div>
      <div><dt>Done</dt><dd id="p-percent">0%</dd></div>
    </dl>
    <p id="p-message" class="hint"></p>
    <p id="p-live" class="visually-hidden" aria-live="polite" aria-atomic="true"></p>
  </section>
</section>

<section id="view-results" class="view" aria-labelledby="results-h" hidden>
  <h1 id="results-h" tabindex="-1">Results</h1>
  <p id="results-empty" class="panel">No results yet. <a href="#/check">Start a check</a>, or open an earlier one from your <a href="#/account">account history</a>.</p>
  <p id="results-error" class="error" role="alert"></p>
  <div id="results-body" hidden>
    <ul id="r-warnings" class="banner" role="status" hidden></ul>
    <dl id="r-cards" class="cards"></dl>
    <div class="downloads" role="group" aria-labelledby="dl-h">
      <span id="dl-h" class="downloads-label">Download</span>
      <a id="dl-json" class="button secondary" download>JSON</a>
      <a id="dl-csv" class="button secondary" download>CSV</a>
      <a id="dl-txt" class="button secondary" download>TXT <span class="visually-hidden">(working proxies)</span></a>
    </div>
    <section class="panel" aria-labelledby="map-h">
      <h2 id="map-h">Where the working proxies exit</h2>
      <div id="r-map" class="map-wrap"></div>
      <p id="r-map-note" class="hint"></p>
    </section>
    <div class="grid">
      <section class="panel" aria-labelledby="anon-h"><h2 id="anon-h">Anonymity</h2><div id="r-anon" class="donut-wrap"></div></section>
      <section class="panel" aria-labelledby="countries-h"><h2 id="countries-h">Countries</h2><div id="r-countries"></div></section>
      <section class="panel" aria-labelledby="hist-h"><h2 id="hist-h">Response time</h2><div id="r-hist"></div></section>
      <section class="panel" aria-labelledby="isp-h"><h2 id="isp-h">Top ISPs</h2><div id="r-isps"></div></section>
    </div>
    <section id="r-fail" class="panel" aria-labelledby="fail-h" hidden>
      <h2 id="fail-h">Why proxies failed</h2>
      <div class="fail-grid"><div id="r-failures"></div><div id="r-fail-notes"></div></div>
    </section>
    <section id="r-custom" class="panel" aria-labelledby="custom-h" hidden>
      <h2 id="custom-h">Custom URLs</h2>
      <div class="table-wrap"><table id="r-custom-table"><thead><tr><th scope="col">URL</th><th scope="col">Passed</th><th scope="col">Failed</th><th scope="col">Success rate</th></tr></thead><tbody></tbody></table></div>
    </section>
    <section class="panel" aria-labelledby="table-h">
      <h2 id="table-h">All proxies</h2>
      <div class="filters" role="search" aria-label="Filter proxies">
        <div class="field"><label for="f-text">Search</label><input id="f-text" type="search" autocomplete="off" spellcheck="false" placeholder="address, ISP, city, error…"></div>
        <div class="field"><label for="f-status">Status</label><select id="f-status"><option value="">All</option><option value="working">Working</option><option value="failed">Failed</option></select></div>
        <div class="field"><label for="f-anon">Anonymity</label><select id="f-anon"><option value="">All</option><option value="elite">Elite</option><option value="anonymous">Anonymous</option><option value="transparent">Transparent</option></select></div>
        <div class="field"><label for="f-country">Country</label><select id="f-country"><option value="">All</option></select></div>
        <div class="field" data-col="protocols" hidden><label for="f-proto">Protocol</label><select id="f-proto"><option value="">All</option><option value="http">HTTP</option><option value="socks4">SOCKS4</option><option value="socks5">SOCKS5</option><option value="none">None passed</option></select></div>
        <div class="field" data-col="https" hidden><label for="f-https">HTTPS</label><select id="f-https"><option value="">All</option><option value="yes">Yes</option><option value="no">No</option></select></div>
        <div class="checkbox" data-col="integrity" hidden><input id="f-lying" type="checkbox"><label for="f-lying">Lying proxies only</label></div>
        <div class="checkbox" data-col="rotation" hidden><input id="f-rotating" type="checkbox"><label for="f-rotating">Rotating only</label></div>
      </div>
      <p id="t-count" class="hint" aria-live="polite"></p>
      <div class="table-wrap" role="region" aria-labelledby="table-h" tabindex="0">
        <table id="r-table">
          <thead><tr>
            <th scope="col" data-key="address"><button type="button" data-sort="address">Proxy</button></th>
            <th scope="col" data-key="status"><button type="button" data-sort="status">Status</button></th>
            <th scope="col" data-key="integrity" data-col="integrity" hidden><button type="button" data-sort="integrity">Integrity</button></th>
            <th scope="col" data-key="protocols" data-col="protocols" hidden><button type="button" data-sort="protocols">Protocols</button></th>
            <th scope="col" data-key="https" data-col="https" hidden><button type="button" data-sort="https">HTTPS</button></th>
            <th scope="col" data-key="exits" data-col="rotation" hidden><button type="button" data-sort="exits">Exits / samples</button></th>
            <th scope="col" data-key="ms"><button type="button" data-sort="ms">Response</button></th>
            <th scope="col" data-key="anonymity"><button type="button" data-sort="anonymity">Anonymity</button></th>
            <th scope="col" data-key="countryName"><button type="button" data-sort="countryName">Country</button></th>
            <th scope="col" data-key="city"><button type="button" data-sort="city">City</button></th>
            <th scope="col" data-key="isp"><button type="button" data-sort="isp">ISP</button></th>
            <th scope="col" data-key="origin"><button type="button" data-sort="origin">Exit IP</button></th>
            <th scope="col" data-key="error"><button type="button" data-sort="error">Error</button></th>
          </tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" id="pg-prev" class="secondary">Previous<span class="visually-hidden"> page</span></button>
        <span id="pg-info"></span>
        <button type="button" id="pg-next" class="secondary">Next<span class="visually-hidden"> page</span></button>
      </div>
    </section>
  </div>
</section>

${poolsViewHtml()}

<section id="view-account" class="view" aria-labelledby="account-h" hidden>
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
</section>
</main>
<footer class="foot"><span>v${version.replace(/[^0-9A-Za-z.+-]/g, '')}</span> · <a href="/docs">API docs</a></footer>
</body>
</html>`;
}
