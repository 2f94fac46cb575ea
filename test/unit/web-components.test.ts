/**
 * The dashboard's components own their markup and export their ids: each
 * id a component's script looks up is in that component's own fragment,
 * once, and no id appears twice on the composed page (issue 35).
 */
import { describe, expect, test } from 'bun:test';
import { dashboardPage } from '../../src/web/page';
import { ACCOUNT_IDS, accountViewHtml } from '../../src/web/client/account-view';
import { CHECK_FORM_IDS, checkFormHtml } from '../../src/web/client/check-form';
import { CHECK_PROGRESS_IDS, checkProgressHtml } from '../../src/web/client/check-progress';
import { CHECK_VIEW_IDS, checkViewHtml } from '../../src/web/client/check-view';
import { CUSTOM_URLS_IDS, customUrlsHtml } from '../../src/web/client/custom-urls';
import { RESULTS_CHARTS_IDS, resultsChartsHtml } from '../../src/web/client/results-charts';
import { RESULTS_CUSTOM_IDS, resultsCustomHtml } from '../../src/web/client/results-custom';
import { RESULTS_SUMMARY_IDS, resultsSummaryHtml } from '../../src/web/client/results-summary';
import { RESULTS_TABLE_IDS, resultsTableHtml } from '../../src/web/client/results-table';
import { RESULTS_VIEW_IDS, resultsViewHtml } from '../../src/web/client/results-view';
import { SHELL_IDS, shellHeaderHtml, shellMainOpenHtml } from '../../src/web/client/shell';
import { SIGNIN_IDS, signinViewHtml } from '../../src/web/client/signin-view';
import { WEBHOOK_DELIVERIES_IDS, webhookDeliveriesHtml } from '../../src/web/client/webhook-deliveries';
import { WEBHOOK_FORM_IDS, webhookFormHtml } from '../../src/web/client/webhook-form';
import { WEBHOOKS_LIST_IDS, webhooksListHtml } from '../../src/web/client/webhooks-list';
import { WEBHOOKS_VIEW_IDS, webhooksViewHtml } from '../../src/web/client/webhooks-view';
import { POOL_CARDS_IDS, poolCardsHtml } from '../../src/web/client/pool-cards';
import { POOL_DOWNLOADS_IDS, poolDownloadsHtml } from '../../src/web/client/pool-downloads';
import { POOL_FORM_IDS, poolFormHtml } from '../../src/web/client/pool-form';
import { POOL_LIVE_IDS, poolLiveHtml } from '../../src/web/client/pool-live';
import { POOL_PROXIES_IDS, poolProxiesHtml } from '../../src/web/client/pool-proxies';
import { POOLS_LIST_IDS, poolsListHtml } from '../../src/web/client/pools-list';
import { POOLS_VIEW_IDS, poolsViewHtml } from '../../src/web/client/pools-view';

/** Each component: its name, its ids, its fragment. */
const COMPONENTS: [string, Readonly<Record<string, string>>, () => string][] = [
  ['shell', SHELL_IDS, () => `${shellHeaderHtml()}\n${shellMainOpenHtml()}`],
  ['signin-view', SIGNIN_IDS, signinViewHtml],
  ['check-view', CHECK_VIEW_IDS, checkViewHtml],
  ['check-form', CHECK_FORM_IDS, checkFormHtml],
  ['custom-urls', CUSTOM_URLS_IDS, customUrlsHtml],
  ['check-progress', CHECK_PROGRESS_IDS, checkProgressHtml],
  ['results-view', RESULTS_VIEW_IDS, resultsViewHtml],
  ['results-summary', RESULTS_SUMMARY_IDS, resultsSummaryHtml],
  ['results-charts', RESULTS_CHARTS_IDS, resultsChartsHtml],
  ['results-custom', RESULTS_CUSTOM_IDS, resultsCustomHtml],
  ['results-table', RESULTS_TABLE_IDS, resultsTableHtml],
  ['webhooks-view', WEBHOOKS_VIEW_IDS, webhooksViewHtml],
  ['webhooks-list', WEBHOOKS_LIST_IDS, webhooksListHtml],
  ['webhook-deliveries', WEBHOOK_DELIVERIES_IDS, webhookDeliveriesHtml],
  ['webhook-form', WEBHOOK_FORM_IDS, webhookFormHtml],
  ['account-view', ACCOUNT_IDS, accountViewHtml],
  ['pools-view', POOLS_VIEW_IDS, poolsViewHtml],
  ['pools-list', POOLS_LIST_IDS, poolsListHtml],
  ['pool-form', POOL_FORM_IDS, poolFormHtml],
  ['pool-cards', POOL_CARDS_IDS, poolCardsHtml],
  ['pool-live', POOL_LIVE_IDS, poolLiveHtml],
  ['pool-downloads', POOL_DOWNLOADS_IDS, poolDownloadsHtml],
  ['pool-proxies', POOL_PROXIES_IDS, poolProxiesHtml],
];

const idsIn = (html: string): string[] => [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
const page = dashboardPage('1.0.0');

describe('the dashboard components', () => {
  for (const [name, ids, html] of COMPONENTS) {
    test(`${name}: every exported id is in its own fragment, once, and on the page`, () => {
      const own = idsIn(html());
      for (const id of Object.values(ids)) {
        expect({ id, times: own.filter((x) => x === id).length }).toEqual({ id, times: 1 });
        expect(page).toContain(`id="${id}"`);
      }
    });
  }

  test('no id appears twice on the page', () => {
    const all = idsIn(page);
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((id, i) => all.indexOf(id) !== i)).toEqual([]);
  });

  test('every id the page holds is exported by some component', () => {
    const exported = new Set(COMPONENTS.flatMap(([, ids]) => Object.values(ids)));
    const labelOnly = idsIn(page).filter((id) => !exported.has(id));
    // the rest only label: headings and hints named by aria-labelledby / aria-describedby / label for=
    for (const id of labelOnly) expect({ id, referenced: new RegExp(`(aria-labelledby|aria-describedby|for)="[^"]*\\b${id}\\b`).test(page) }).toEqual({ id, referenced: true });
  });

  test('each fragment is on the page as it is', () => {
    for (const [, , html] of COMPONENTS) expect(page).toContain(html());
  });
});
