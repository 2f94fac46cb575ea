/**
 * The dashboard's one HTML page (served at /app), composed of the
 * components' markup: the frame (client/shell.ts: header, navigation, the
 * banner for a judge that proxies elsewhere cannot reach, filled from
 * /health) and the six views, each the fragment of its own module (sign-in
 * with how to get a key; new check with live progress; results; pools;
 * webhooks; account). Each component owns its markup and exports its ids; the script
 * (/app/app.js, built from src/web/client) shows one view at a time, wires
 * the forms and fills in the data. No inline script or style: the page is
 * served with a strict CSP.
 */
import { accountViewHtml } from './client/account-view';
import { checkViewHtml } from './client/check-view';
import { poolsViewHtml } from './client/pools-view';
import { resultsViewHtml } from './client/results-view';
import { DASHBOARD_TITLE, shellHeaderHtml, shellMainOpenHtml } from './client/shell';
import { signinViewHtml } from './client/signin-view';
import { webhooksViewHtml } from './client/webhooks-view';

export { DASHBOARD_TITLE };

/** The views in the order they sit in <main>. */
const VIEWS: readonly (() => string)[] = [signinViewHtml, checkViewHtml, resultsViewHtml, poolsViewHtml, webhooksViewHtml, accountViewHtml];

/** From the doctype to the skip link: the head loads the stylesheet and the script of this version. */
function pageHead(version: string): string {
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
<a class="skip" href="#main">Skip to content</a>`;
}

function pageFoot(version: string): string {
  return `</main>
<footer class="foot"><span>v${version.replace(/[^0-9A-Za-z.+-]/g, '')}</span> · <a href="/docs">API docs</a></footer>
</body>
</html>`;
}

export function dashboardPage(version: string): string {
  return [pageHead(version), shellHeaderHtml(), shellMainOpenHtml(), '', VIEWS.map((view) => view()).join('\n\n'), pageFoot(version)].join('\n');
}
