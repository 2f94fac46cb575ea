/**
 * The dashboard's components own their markup and export their ids: each
 * id a component's script looks up is in that component's own fragment,
 * once, and no id appears twice on the composed page (issue 35).
 */
import { describe, expect, test } from 'bun:test';
import { dashboardPage } from '../../src/web/page';
import { POOL_CARDS_IDS, poolCardsHtml } from '../../src/web/client/pool-cards';
import { POOL_DOWNLOADS_IDS, poolDownloadsHtml } from '../../src/web/client/pool-downloads';
import { POOL_FORM_IDS, poolFormHtml } from '../../src/web/client/pool-form';
import { POOL_LIVE_IDS, poolLiveHtml } from '../../src/web/client/pool-live';
import { POOL_PROXIES_IDS, poolProxiesHtml } from '../../src/web/client/pool-proxies';
import { POOLS_LIST_IDS, poolsListHtml } from '../../src/web/client/pools-list';
import { POOLS_VIEW_IDS, poolsViewHtml } from '../../src/web/client/pools-view';

/** Each component: its name, its ids, its fragment. */
const COMPONENTS: [string, Readonly<Record<string, string>>, () => string][] = [
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

  test('each fragment is on the page as it is', () => {
    for (const [, , html] of COMPONENTS) expect(page).toContain(html());
  });
});
