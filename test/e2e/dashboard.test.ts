/**
 * The web dashboard end to end in headless Chromium (Debian's `chromium`,
 * driven by playwright-core; never a downloaded browser): the real service
 * (startTestService) and fake proxies on 127.0.0.1. Sign in with a key, run a
 * check and watch its live progress, see the map and charts, sort and filter
 * the table with mouse and keyboard, download CSV and JSON, open the account
 * page and a result from its history, the map with synthetic coordinates
 * (loopback proxies have no geo), a type auto check with 3 samples (the
 * protocols, exits / samples and integrity columns, their filters, the
 * lying and rotating cards), a phone-width layout, honest regions (one
 * machine: the region card and a hint say every region probes from it), the
 * failure-reasons chart and the error column's messages, the banner for a
 * judge only this machine reaches, how to get a key on the sign-in page, dark
 * mode, basic accessibility (labels, focus ring, skip link, keyboard
 * sign-out), the latest result shown again after a new sign-in, the error
 * column on a 1366 px screen, the form's count of valid unique proxies, and
 * a reload mid-check that reattaches to the running (asynchronous) check. Every
 * request the page makes must go to the service itself (no CDN).
 *
 * Without /usr/bin/chromium the file registers one test that says so and
 * passes, except under CI=true, where a missing browser is a failure
 * (test/helpers/browser.ts).
 * DASHBOARD_SCREENSHOTS=<dir> also saves the screenshots used in README.md and docs/DASHBOARD.md.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { haveChromium, launchChromium, reportNoBrowser, see, type Browser } from '../helpers/browser';
import { startHttpProxy, startRotatingProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { injectScript, startTamperingProxy } from '../fixtures/tampering-proxy';
import { refusedPort, startBlackHoleAnyAddress, startTarget, type FakeServer } from '../fixtures/fake-servers';
import { startTestService, type TestService } from '../helpers/service';
import { project } from '../../src/web/client/geo';

// The page.evaluate callbacks run in the browser. The project has no DOM lib (see
// src/web/client/browser.ts), so they reach the page's globals untyped.
type B = any; // eslint-disable-line @typescript-eslint/no-explicit-any
declare const document: B, window: B, localStorage: B, sessionStorage: B, getComputedStyle: B, MutationObserver: B;

const SHOTS = process.env.DASHBOARD_SCREENSHOTS;
const BLACK_HOLES = 20;

if (!haveChromium()) {
  reportNoBrowser('dashboard e2e');
} else {
  describe('web dashboard in Chromium', () => {
    let t: TestService;
    let browser: Browser;
    let ctx: BrowserContext;
    let page: Page;
    const servers: FakeServer[] = [];
    let elite: FakeServer, anonymous: FakeServer, transparent: FakeServer, hole: FakeServer, target: FakeServer;
    let refused: number;
    const problems: string[] = [];
    const foreign: string[] = [];
    let totalChecked = 0;

    const watch = (p: Page) => {
      p.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      p.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      p.on('request', (r) => {
        const u = r.url();
        const host = new URL(t.url).host;
        if (!(u.startsWith(`http://${host}/`) || u.startsWith(`ws://${host}/`) || u.startsWith('data:'))) foreign.push(u);
      });
    };
    const shot = async (p: Page, name: string, fullPage = false) => {
      if (!SHOTS) return;
      mkdirSync(SHOTS, { recursive: true });
      await p.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage });
    };
    const rowsOf = (p: Page) => p.locator('#r-table tbody tr');
    const column = (p: Page, i: number) => p.$$eval(`#r-table tbody tr td:nth-child(${i})`, (tds) => tds.map((td) => td.textContent ?? ''));

    beforeAll(async () => {
      t = await startTestService();
      elite = await startHttpProxy();
      anonymous = await startHttpProxy({ addHeaders: () => [['Via', '1.1 fake-proxy']] });
      transparent = await startHttpProxy({ addHeaders: (ip) => [['X-Forwarded-For', ip]] });
      hole = await startBlackHoleAnyAddress();
      target = await startTarget({ '/ok': { status: 200, body: 'Hello Proxy World' } });
      servers.push(elite, anonymous, transparent, hole, target);
      refused = await refusedPort();
      browser = await launchChromium({ width: 1280, height: 900 });
      ctx = browser.ctx;
      ctx.setDefaultTimeout(8000);
      page = ctx.pages()[0] ?? (await ctx.newPage());
      watch(page);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await Promise.all(servers.map((s) => s.close()));
      await t?.stop();
    }, 30_000);

    test('/ redirects to /app; the page and every asset come from the service itself', async () => {
      const res = await page.goto(`${t.url}/`);
      expect(res?.status()).toBe(200);
      expect(page.url()).toBe(`${t.url}/app`);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.locator('#signin-h').waitFor();
      expect(await page.title()).toBe('Sign in · Proxy checker');
      expect(await page.locator('#nav').isHidden()).toBe(true);
      await see(page.locator('#nokey-h')).toHaveText('No key, or lost it?');
      await see(page.locator('#view-signin')).toContainText('npm run admin -- issue-key --email you@example.com');
      // this service's /health has no judge_reachable warning: no banner
      expect(await page.locator('#judge-banner').isHidden()).toBe(true);
      await shot(page, 'signin');
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    });

    test('sign-in: a wrong key gets a message; the right key opens the check form and is kept for this tab only', async () => {
      await page.fill('#key', 'pc_not_a_real_key');
      await page.press('#key', 'Enter');
      await see(page.locator('#signin-error')).toHaveText('That API key is not valid.');
      expect(await page.getAttribute('#key', 'aria-invalid')).toBe('true');
      // the browser logs the refused GET /me; that one is expected
      expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
      problems.length = 0;
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await page.locator('#check-h').waitFor();
      expect(await page.locator('#nav').isVisible()).toBe(true);
      expect(await page.getAttribute('a[data-route="check"]', 'aria-current')).toBe('page');
      const stored = await page.evaluate(() => [sessionStorage.getItem('proxycheck.apiKey'), localStorage.getItem('proxycheck.apiKey')]);
      expect(stored).toEqual([t.key, null]);
      // regions come from GET /regions (19 accepted; test1 is not offered)
      await see(page.locator('#region option')).toHaveCount(19);
      expect(await page.inputValue('#region')).toBe('us1');
      // one machine (no agents in /health): the region hint says where the probes really come from
      await see(page.locator('#region-hint')).toBeVisible();
      await see(page.locator('#region-hint')).toHaveText('This service runs on one machine: every region probes from it.');
    });

    test('a check against local fake proxies: live progress, then the map and charts', async () => {
      const holes = Array.from({ length: BLACK_HOLES }, (_, i) => `127.1.0.${i + 1}:${hole.port}`);
      const list = [
        '# my proxies',
        `127.0.0.1:${elite.port}`,
        `127.0.0.1:${anonymous.port}`,
        `127.0.0.1:${transparent.port}`,
        `http://127.0.0.1:${elite.port}`, // duplicate
        ...holes,
        `127.0.0.1:${refused}`,
        'not a proxy',
      ].join('\n');
      totalChecked = 3 + BLACK_HOLES + 1;
      await page.fill('#proxies', list);
      await see(page.locator('#proxies-count')).toHaveText(`${totalChecked} proxies (1 invalid, 1 duplicate skipped)`);
      await page.selectOption('#region', 'de1');
      await page.fill('#timeout', '1000');
      await page.click('#cu-add');
      await page.fill('#cu-url-1', `http://127.0.0.1:${target.port}/ok`);
      await page.fill('#cu-text-1', 'proxy world');
      // record every progress state the page shows
      await page.evaluate(() => {
        const w = window as unknown as { __seen: { value: number; checked: string; eta: string }[] };
        w.__seen = [];
        const bar = document.getElementById('p-bar') as B;
        const note = () => w.__seen.push({ value: bar.value, checked: document.getElementById('p-checked')!.textContent ?? '', eta: document.getElementById('p-eta')!.textContent ?? '' });
        new MutationObserver(note).observe(document.getElementById('progress')!, { subtree: true, childList: true, characterData: true, attributes: true });
      });
      await page.click('#start');
      await see(page.locator('#progress')).toBeVisible();
      expect(await page.isDisabled('#start')).toBe(true);
      // mid-run: the working proxies are done, the black holes are still waiting for their timeout
      await page.waitForFunction(() => {
        const v = (document.getElementById('p-bar') as B).value;
        return v > 5 && v < 95;
      });
      await shot(page, 'progress');
      await page.waitForURL(/#\/results$/, { timeout: 15_000 });
      await page.locator('#results-body').waitFor();
      const seen = (await page.evaluate(() => (window as unknown as { __seen: { value: number; checked: string; eta: string }[] }).__seen)) as { value: number; checked: string; eta: string }[];
      expect(seen.some((s) => s.value > 5 && s.value < 95 && new RegExp(`^\\d+ of ${totalChecked}$`).test(s.checked))).toBe(true);
      expect(seen.some((s) => s.value === 100 && s.checked === `${totalChecked} of ${totalChecked}` && s.eta === 'done')).toBe(true);
      expect(await page.textContent('#p-live')).toBe(`Check complete: 3 of ${totalChecked} proxies working.`);
      expect(await page.isDisabled('#start')).toBe(false);

      // results: cards, downloads, charts, map (no geo on loopback: zero points), custom URLs, table
      await see(page.locator('#r-cards')).toContainText(`3 of ${totalChecked}`);
      await see(page.locator('#r-cards .card', { hasText: 'Region' }).locator('dd')).toHaveText('de1, probed from this machine');
      expect(await page.textContent('#r-cards')).not.toContain('Frankfurt');
      await see(page.locator('#r-cards')).toContainText('1 invalid, 1 duplicate');
      await see(page.locator('#r-anon svg.donut path')).toHaveCount(3);
      await see(page.locator('#r-anon .legend')).toContainText('Elite 1 (33.3%)');
      await see(page.locator('#r-countries svg .bar-row')).toHaveCount(1);
      await see(page.locator('#r-countries svg')).toContainText('Unknown');
      expect(await page.locator('#r-hist svg rect.bar').count()).toBeGreaterThanOrEqual(1);
      await page.locator('#r-map svg.map path.map-land').waitFor({ state: 'attached' });
      await see(page.locator('#r-map svg.map circle')).toHaveCount(0);
      await see(page.locator('#r-map-note')).toHaveText('0 working proxies on the map; 3 without a known location (for example addresses on a private network).');
      // why proxies failed: a bar per code (the black holes time out, one port refuses), with a note each
      await see(page.locator('#r-fail')).toBeVisible();
      await see(page.locator('#r-failures svg .bar-row')).toHaveCount(2);
      await see(page.locator('#r-failures svg .bar-row').first()).toContainText('timeout');
      await see(page.locator('#r-failures svg .bar-row').first()).toContainText(String(BLACK_HOLES));
      await see(page.locator('#r-fail-notes')).toContainText('nothing listens at that address and port');
      await see(page.locator('#r-custom-table tbody tr')).toHaveCount(1);
      await see(page.locator('#r-custom-table tbody tr td').nth(1)).toHaveText('3');
      await see(rowsOf(page)).toHaveCount(totalChecked);
      await see(page.locator('#t-count')).toHaveText(`${totalChecked} proxies`);
      await shot(page, 'results-local', true);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    }, 30_000);

    test('the table sorts (mouse and keyboard) and filters', async () => {
      await page.click('th[data-key="ms"] button');
      expect(await page.getAttribute('th[data-key="ms"]', 'aria-sort')).toBe('ascending');
      const ms = (await column(page, 3)).map((s) => Number.parseFloat(s));
      expect(ms).toEqual([...ms].sort((a, b) => a - b));
      await page.focus('th[data-key="ms"] button');
      await page.keyboard.press('Enter');
      expect(await page.getAttribute('th[data-key="ms"]', 'aria-sort')).toBe('descending');
      const down = (await column(page, 3)).map((s) => Number.parseFloat(s));
      expect(down).toEqual([...down].sort((a, b) => b - a));
      expect(await page.locator('th[aria-sort]').count()).toBe(1);

      await page.selectOption('#f-status', 'working');
      await see(rowsOf(page)).toHaveCount(3);
      expect(new Set(await column(page, 2))).toEqual(new Set(['working']));
      await page.selectOption('#f-anon', 'transparent');
      await see(rowsOf(page)).toHaveCount(1);
      expect(await column(page, 1)).toEqual([`127.0.0.1:${transparent.port}`]);
      await page.selectOption('#f-anon', '');
      await page.selectOption('#f-status', '');
      await page.fill('#f-text', 'TIMEOUT');
      await see(rowsOf(page)).toHaveCount(BLACK_HOLES);
      await see(page.locator('#t-count')).toHaveText(`${BLACK_HOLES} of ${totalChecked} proxies match`);
      await page.fill('#f-text', 'connect_refused');
      await see(rowsOf(page)).toHaveCount(1);
      // the error column shows the message beside the code
      await see(rowsOf(page).locator('td.err')).toHaveText('connect_refused connection refused');
      await page.fill('#f-text', 'no such thing');
      await see(page.locator('#r-table tbody')).toHaveText('No proxy matches these filters.');
      await page.fill('#f-text', '');
      await see(rowsOf(page)).toHaveCount(totalChecked);
    });

    test("the Error column fits a laptop's 1366 px screen: its messages wrap, nothing to scroll sideways", async () => {
      await page.setViewportSize({ width: 1366, height: 768 });
      try {
        await page.waitForTimeout(200);
        const fit = await page.evaluate(() => {
          const wrap = document.querySelector('#r-table').closest('.table-wrap');
          const cell = document.querySelector('#r-table tbody td.err');
          return { scroll: wrap.scrollWidth - wrap.clientWidth, cellRight: cell.getBoundingClientRect().right, wrapRight: wrap.getBoundingClientRect().right };
        });
        expect(fit.scroll).toBeLessThanOrEqual(0);
        expect(fit.cellRight).toBeLessThanOrEqual(fit.wrapRight);
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });

    test('downloads: CSV, TXT and JSON from the same signed link', async () => {
      const csvHref = (await page.getAttribute('#dl-csv', 'href'))!;
      expect(csvHref).toMatch(/\/result\/[A-Za-z0-9_-]+\.csv\?token=[0-9a-f]{64}&expires=\d+$/);
      const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#dl-csv')]);
      const csvText = readFileSync((await csv.path())!, 'utf8');
      const lines = csvText.trim().split(/\r?\n/);
      expect(lines).toHaveLength(totalChecked + 1);
      expect(lines[0]).toContain('host');
      expect(lines.slice(1).filter((l) => l.includes('working'))).toHaveLength(3);
      const [txt] = await Promise.all([page.waitForEvent('download'), page.click('#dl-txt')]);
      const txtLines = readFileSync((await txt.path())!, 'utf8').trim().split(/\r?\n/);
      expect(txtLines.sort()).toEqual([`127.0.0.1:${anonymous.port}`, `127.0.0.1:${elite.port}`, `127.0.0.1:${transparent.port}`].sort());
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#dl-json')]);
      const file = JSON.parse(readFileSync((await json.path())!, 'utf8')) as { proxies: unknown[]; summary: { total_working: number } };
      expect(file.proxies).toHaveLength(totalChecked);
      expect(file.summary.total_working).toBe(3);
    });

    test('account page: balance, plan, 30-day usage chart, history with links that open the result', async () => {
      await page.click('a[data-route="account"]');
      await page.locator('#a-history tbody button[data-link]').first().waitFor();
      await see(page.locator('#a-cards')).toContainText(`${1000 - totalChecked} checks`);
      await see(page.locator('#a-cards')).toContainText('Pay per check');
      await see(page.locator('#a-cards')).toContainText('demo@localhost');
      await see(page.locator('#a-usage svg.daily rect.bar')).toHaveCount(30);
      await see(page.locator('#a-usage svg.daily rect.bar title').last()).toContainText(`${totalChecked} checks`);
      await see(page.locator('#a-history tbody tr')).toHaveCount(1);
      await see(page.locator('#a-history tbody tr td').nth(2)).toHaveText(String(totalChecked));
      const hrefs = await page.$$eval('#a-history tbody a', (as) => as.map((a) => (a as B).href));
      expect(hrefs.map((h) => new URL(h).pathname.split('.').pop())).toEqual(['json', 'csv', 'txt']);
      await shot(page, 'account');
      await page.click('#a-history tbody button[data-link]');
      await page.waitForURL(/#\/results$/);
      await see(rowsOf(page)).toHaveCount(totalChecked);
      expect(problems).toEqual([]);
    });

    test('the map puts a point per working proxy at its coordinates (synthetic geo: loopback proxies have none)', async () => {
      const geo = (host: string, city: string, country: string, code: string, lat: number, lon: number, ms: number, anonymity = 'elite') => ({
        proxy: { host, port: 8080, hasAuth: false },
        status: 'working',
        statusCode: 200,
        responseTime: `${ms.toFixed(2)} ms`,
        anonymity,
        origin: host,
        country: code,
        country_name: country,
        location: city,
        isp: `${country} Telecom`,
        asn: 64500,
        coordinates: { lat, lon },
      });
      const proxies = [
        geo('203.0.113.1', 'Berlin', 'Germany', 'DE', 52.52, 13.4, 120),
        geo('203.0.113.2', 'Berlin', 'Germany', 'DE', 52.53, 13.38, 180, 'anonymous'),
        geo('203.0.113.3', 'Tokyo', 'Japan', 'JP', 35.68, 139.69, 420),
        geo('203.0.113.4', 'São Paulo', 'Brazil', 'BR', -23.55, -46.63, 650, 'transparent'),
        geo('203.0.113.5', 'New York', 'United States', 'US', 40.71, -74.0, 90),
        { ...geo('203.0.113.6', '', '', '', 0, 0, 300), location: null, country: null, country_name: null, isp: null, asn: null, coordinates: null },
        { proxy: { host: '203.0.113.7', port: 3128, hasAuth: false }, status: 'failed', statusCode: null, responseTime: '1000.00 ms', anonymity: null, origin: null, country: null, country_name: null, location: null, isp: null, asn: null, coordinates: null, error: { code: 'timeout', message: 'no answer within 1000 ms' } },
      ];
      const sample = {
        summary: {
          total_working: 6,
          countries: { Germany: 2, Japan: 1, Brazil: 1, 'United States': 1, Unknown: 1 },
          anonymity_levels: { elite: 4, anonymous: 1, transparent: 1 },
          top_isps: { 'Germany Telecom': 2, 'Japan Telecom': 1, 'Brazil Telecom': 1, 'United States Telecom': 1, Unknown: 1 },
        },
        metadata: { region_used: 'us1', region_name: 'Washington DC, USA', proxy_type: 'http', timeout_used: '1000ms', total_checked: 7, processing_time: '1.02s' },
        proxies,
      };
      await ctx.route('**/result/*.json?*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(sample) }));
      try {
        await page.click('a[data-route="account"]');
        await page.click('#a-history tbody button[data-link]');
        await page.waitForURL(/#\/results$/);
        await see(page.locator('#r-map svg.map circle')).toHaveCount(4);
        await page.locator('#r-map svg.map path.map-land').waitFor({ state: 'attached' });
        const circles = await page.$$eval('#r-map svg.map circle', (cs) =>
          cs.map((c) => ({ cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')), title: c.querySelector('title')?.textContent ?? '' })),
        );
        const berlin = circles.find((c) => c.title === 'Berlin, Germany: 2 proxies')!;
        expect(berlin).toBeDefined();
        expect(berlin.cx).toBeCloseTo(project(13.39, 52.525).x, 0);
        expect(berlin.cy).toBeCloseTo(project(13.39, 52.525).y, 0);
        expect(circles.map((c) => c.title).sort()).toEqual(['Berlin, Germany: 2 proxies', 'New York, United States: 1 proxy', 'São Paulo, Brazil: 1 proxy', 'Tokyo, Japan: 1 proxy']);
        await see(page.locator('#r-map-note')).toHaveText('5 working proxies on the map; 1 without a known location (for example addresses on a private network).');
        await see(page.locator('#r-countries svg .bar-row')).toHaveCount(5);
        await page.selectOption('#f-country', 'DE');
        await see(rowsOf(page)).toHaveCount(2);
        await page.selectOption('#f-country', '');
        await shot(page, 'results', true);
        const phone = await ctx.newPage();
        watch(phone);
        await phone.setViewportSize({ width: 390, height: 844 });
        await phone.goto(`${t.url}/app#/results`);
        // sessionStorage is per tab: a new tab must sign in again (this time remembered on the device)
        await phone.locator('#signin-h').waitFor();
        await phone.fill('#key', t.key);
        await phone.check('#remember');
        await phone.click('#signin-submit');
        await phone.locator('#results-h').waitFor();
        expect(await phone.evaluate(() => localStorage.getItem('proxycheck.apiKey'))).toBe(t.key);
        await phone.click('a[data-route="account"]');
        await phone.click('#a-history tbody button[data-link]');
        await phone.locator('#r-map svg.map circle').first().waitFor({ state: 'attached' });
        await phone.waitForTimeout(200);
        const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(await overflow()).toBeLessThanOrEqual(0);
        await shot(phone, 'phone-results', true);
        await phone.click('a[data-route="check"]');
        await phone.locator('#check-h').waitFor();
        await phone.fill('#proxies', '203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n192.0.2.44:1080:bob:secret\n');
        await see(phone.locator('#proxies-count')).toHaveText('3 proxies');
        expect(await overflow()).toBeLessThanOrEqual(0);
        await shot(phone, 'phone-check', true);
        await phone.click('a[data-route="account"]');
        await phone.locator('#a-usage svg').waitFor();
        expect(await overflow()).toBeLessThanOrEqual(0);
        await shot(phone, 'phone-account', true);
        await phone.close();
      } finally {
        await ctx.unroute('**/result/*.json?*');
      }
      expect(problems).toEqual([]);
    }, 30_000);

    test('type auto with 3 samples: protocols, exits / samples and integrity columns with their filters; lying and rotating cards', async () => {
      const rotating = await startRotatingProxy();
      const socks = await startSocksProxy();
      const liar = await startTamperingProxy({ rewrite: injectScript });
      servers.push(rotating, socks, liar);
      await page.click('a[data-route="check"]');
      await page.locator('#check-h').waitFor();
      for (const remove of await page.locator('#cu-rows button').all()) await remove.click(); // the custom URL of the first check
      await page.fill('#proxies', [rotating, socks, liar].map((s) => `127.0.0.1:${s.port}`).concat(`127.0.0.1:${refused}`).join('\n'));
      await page.selectOption('#type', 'auto');
      await page.fill('#timeout', '1000');
      await page.fill('#samples', '11');
      await page.click('#start');
      await see(page.locator('#check-error')).toHaveText('Samples per proxy must be a whole number from 1 to 10.');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('samples');
      await page.fill('#samples', '3');
      await page.click('#start');
      await page.waitForURL(/#\/results$/, { timeout: 15_000 });
      await see(rowsOf(page)).toHaveCount(4);
      const cards = page.locator('#r-cards');
      await see(cards).toContainText('AUTO');
      await see(cards.locator('.card', { hasText: 'Protocols' })).toContainText('HTTP 1 · SOCKS4 1 · SOCKS5 1');
      await see(cards.locator('.card', { hasText: 'Rotating' })).toContainText('1 of 2 working');
      await see(cards.locator('.card.alert', { hasText: 'Lying proxies' }).locator('dd')).toHaveText('1');
      // the optional columns this job has (https: the check runs by default), each with its filter
      const heads = await page.$$eval('#r-table thead th', (ths) => ths.filter((th) => !(th as B).hidden).map((th) => th.textContent));
      expect(heads).toEqual(['Proxy', 'Status', 'Integrity', 'Protocols', 'HTTPS', 'Exits / samples', 'Response', 'Anonymity', 'Country', 'City', 'ISP', 'Exit IP', 'Error']);
      expect(await page.isHidden('#f-https')).toBe(false);
      const byPort = async (port: number) => (await page.locator('#r-table tbody tr', { hasText: `127.0.0.1:${port}` }).locator('td').allTextContents()).map((x) => x.trim());
      expect(await byPort(rotating.port)).toMatchObject({ 1: 'working', 2: '—', 3: 'http', 4: 'yes', 5: '3 / 3 rotating' });
      expect(await byPort(socks.port)).toMatchObject({ 2: '—', 3: 'socks5 socks4', 4: 'yes', 5: '1 / 3' });
      expect(await byPort(liar.port)).toMatchObject({ 1: 'failed', 2: 'tampered', 3: 'none', 4: '—', 5: '0 / 3' });
      expect((await byPort(liar.port))[12]).toMatch(/^tampered http: bytes injected: /);
      await see(page.locator('#r-table tbody .badge.lie')).toHaveCount(1);
      expect(await page.getAttribute('#r-table tbody .badge.lie', 'title')).toMatch(/^http: bytes injected: /);
      const lieStyle = await page.$eval('#r-table tbody .badge.lie', (e) => getComputedStyle(e).backgroundColor);
      expect(lieStyle).toBe('rgb(143, 28, 19)');
      await shot(page, 'results-auto', true);
      // filters
      await page.check('#f-lying');
      await see(rowsOf(page)).toHaveCount(1);
      expect(await column(page, 1)).toEqual([`127.0.0.1:${liar.port}`]);
      await page.uncheck('#f-lying');
      await page.check('#f-rotating');
      await see(rowsOf(page)).toHaveCount(1);
      expect(await column(page, 1)).toEqual([`127.0.0.1:${rotating.port}`]);
      await page.uncheck('#f-rotating');
      await page.selectOption('#f-proto', 'socks4');
      await see(rowsOf(page)).toHaveCount(1);
      expect(await column(page, 1)).toEqual([`127.0.0.1:${socks.port}`]);
      await page.selectOption('#f-proto', 'none');
      await see(rowsOf(page)).toHaveCount(2);
      await page.selectOption('#f-proto', '');
      await page.click('th[data-key="exits"] button');
      await page.click('th[data-key="exits"] button');
      expect((await column(page, 6))[0]).toBe('3 / 3 rotating');
      await see(rowsOf(page)).toHaveCount(4);
      // a plain result afterwards hides them again but https (the map test's check, from the history)
      await page.click('a[data-route="account"]');
      await page.locator('#a-history tbody button[data-link]').last().click();
      await page.waitForURL(/#\/results$/);
      await see(rowsOf(page)).toHaveCount(totalChecked);
      expect(await page.$$eval('#r-table thead th', (ths) => ths.filter((th) => !(th as B).hidden).length)).toBe(10);
      expect(await page.isHidden('#f-lying')).toBe(true);
      await see(page.locator('#r-cards .card', { hasText: 'Lying proxies' }).locator('dd')).toHaveText('0');
      expect(problems).toEqual([]);
    }, 30_000);

    test("a judge only this machine reaches: the banner names the settings (GET /health's judge_reachable); a check's warnings show with its results", async () => {
      await ctx.route('**/health', async (route) => {
        const real = await route.fetch();
        const body = { ...((await real.json()) as Record<string, unknown>), judge_reachable: 'this machine only' };
        await route.fulfill({ status: real.status(), contentType: 'application/json', body: JSON.stringify(body) });
      });
      await ctx.route('**/result/*.json?*', async (route) => {
        const real = await route.fetch();
        const file = (await real.json()) as { metadata: Record<string, unknown> };
        file.metadata.warnings = ['Only proxies on this machine can reach the judge (http://127.0.0.1/judge).'];
        await route.fulfill({ status: real.status(), contentType: 'application/json', body: JSON.stringify(file) });
      });
      try {
        await page.goto(`${t.url}/app#/account`);
        await page.reload(); // the same page with another hash is not loaded again
        await page.locator('#a-history tbody button[data-link]').first().waitFor();
        await see(page.locator('#judge-banner')).toBeVisible();
        await see(page.locator('#judge-banner')).toContainText('reachable from this machine only');
        await see(page.locator('#judge-banner')).toContainText('BASE_URL (or JUDGE_URL)');
        await page.locator('#a-history tbody button[data-link]').last().click();
        await page.waitForURL(/#\/results$/);
        await see(page.locator('#r-warnings li')).toHaveCount(1);
        await see(page.locator('#r-warnings li')).toHaveText('Only proxies on this machine can reach the judge (http://127.0.0.1/judge).');
      } finally {
        await ctx.unroute('**/result/*.json?*');
        await ctx.unroute('**/health');
      }
      await page.reload();
      await page.locator('#results-h').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.locator('#judge-banner').isHidden()).toBe(true);
      expect(problems).toEqual([]);
    });

    test('dark mode follows the system (prefers-color-scheme), light otherwise', async () => {
      const colours = () =>
        page.evaluate(() => {
          const bg = (el: B) => getComputedStyle(el).backgroundColor;
          return { body: bg(document.documentElement), panel: bg(document.querySelector('.panel')), text: getComputedStyle(document.body).color };
        });
      const light = await colours();
      expect(light.body).toBe('rgb(244, 246, 249)');
      await page.emulateMedia({ colorScheme: 'dark' });
      try {
        await page.click('a[data-route="account"]');
        await page.locator('#a-usage svg').waitFor();
        const dark = await colours();
        expect(dark.body).toBe('rgb(15, 20, 27)');
        expect(dark.panel).toBe('rgb(23, 29, 38)');
        expect(dark.text).toBe('rgb(230, 233, 238)');
        await shot(page, 'account-dark');
      } finally {
        await page.emulateMedia({ colorScheme: 'light' });
      }
      expect(problems).toEqual([]);
    });

    test('accessibility: labelled controls, skip link, visible focus, keyboard-only sign-out', async () => {
      await page.goto(`${t.url}/app#/check`);
      await page.locator('#check-h').waitFor();
      await page.click('#cu-add');
      const unlabelled = await page.$$eval('input, select, textarea', (els) =>
        els
          .filter((e) => (e as B).type !== 'hidden')
          .filter((e) => ((e as B).labels?.length ?? 0) === 0 && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
          .map((e) => e.id || e.outerHTML.slice(0, 60)),
      );
      expect(unlabelled).toEqual([]);
      await page.reload();
      await page.locator('#check-h').waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
      const skipTop = await page.evaluate(() => document.activeElement!.getBoundingClientRect().top);
      expect(skipTop).toBeGreaterThanOrEqual(0); // on screen when focused
      await page.focus('#start');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      const ring = await page.evaluate(() => {
        const s = getComputedStyle(document.activeElement!);
        return { id: document.activeElement!.id, style: s.outlineStyle, width: Number.parseFloat(s.outlineWidth) };
      });
      expect(ring).toMatchObject({ id: 'start', style: 'solid' });
      expect(ring.width).toBeGreaterThanOrEqual(2);
      await page.focus('#signout');
      await page.keyboard.press('Enter');
      await page.locator('#signin-h').waitFor();
      await see(page.locator('#signin-error')).toHaveText('You are signed out.');
      const stored = await page.evaluate(() => [sessionStorage.getItem('proxycheck.apiKey'), localStorage.getItem('proxycheck.apiKey')]);
      expect(stored).toEqual([null, null]);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    });

    test('signed in again, the Results tab shows the latest check of the history (not "No results yet")', async () => {
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await page.locator('#check-h').waitFor();
      await page.click('a[data-route="results"]');
      await see(page.locator('#results-body')).toBeVisible();
      expect(await page.locator('#results-empty').isHidden()).toBe(true);
      expect(await rowsOf(page).count()).toBeGreaterThan(0);
      expect(problems).toEqual([]);
      await page.click('#signout'); // signed out again, as the next test starts
      await page.locator('#signin-h').waitFor();
    });

    test('a check the balance cannot cover shows the 402 message and leaves the form usable', async () => {
      const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}`, 'content-type': 'application/json' };
      const created = await fetch(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, body: JSON.stringify({ email: 'poor@example.com', checks: 1 }) });
      expect(created.status).toBe(200);
      const { apiKey } = (await created.json()) as { apiKey: string };
      await page.fill('#key', apiKey);
      await page.click('#signin-submit');
      await page.locator('#check-h').waitFor();
      await page.fill('#proxies', `127.0.0.1:${elite.port}\n127.0.0.1:${anonymous.port}\n127.0.0.1:${transparent.port}`);
      await page.click('#start');
      await see(page.locator('#check-error')).toHaveText('Insufficient Checks: You need 3 checks but only have 1 remaining.');
      expect(await page.getAttribute('#check-error', 'role')).toBe('alert');
      expect(await page.isDisabled('#start')).toBe(false);
      expect(page.url()).toMatch(/#\/check$/);
      // the refused POST is logged by the browser; nothing else went wrong
      expect(problems.filter((p) => !p.includes('status of 402'))).toEqual([]);
      problems.length = 0;
    });

    test('a check is submitted asynchronously; reloading the page mid-check reattaches to it and shows its result', async () => {
      await page.goto(`${t.url}/app#/check`);
      await page.evaluate(() => sessionStorage.clear());
      await page.reload();
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await page.locator('#check-h').waitFor();
      const posts: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST') posts.push(new URL(r.url()).pathname + new URL(r.url()).search);
      });
      const holes = Array.from({ length: 5 }, (_, i) => `127.1.9.${i + 1}:${hole.port}`);
      await page.fill('#proxies', [`127.0.0.1:${elite.port}`, ...holes].join('\n'));
      await page.fill('#timeout', '4000');
      await page.click('#start');
      // mid-run: the working proxy is checked, the black holes wait for their 4 s
      await see(page.locator('#p-checked')).toHaveText('1 of 6');
      const kept = await page.evaluate(() => sessionStorage.getItem('proxycheck.runningJob'));
      expect(kept).toMatch(/^web-[0-9a-f]+$/);
      expect(posts).toEqual(['/check?async=true']);
      await page.reload();
      // the reloaded page follows the same job: no new POST, the panel busy, then the results
      await see(page.locator('#progress')).toBeVisible();
      expect(await page.isDisabled('#start')).toBe(true);
      await page.waitForURL(/#\/results$/, { timeout: 15_000 });
      await see(page.locator('#r-cards')).toContainText('1 of 6');
      expect(posts).toEqual(['/check?async=true']);
      expect(await page.evaluate(() => sessionStorage.getItem('proxycheck.runningJob'))).toBeNull();
      const job = (await (await fetch(`${t.url}/checks/${kept}`, { headers: { 'x-api-key': t.key } })).json()) as { status: string };
      expect(job.status).toBe('completed');
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    }, 30_000);
  });
}
