/**
 * The dashboard's Webhooks page in headless Chromium against the real
 * service on 127.0.0.1: an empty list, the form's checks, a webhook added
 * (its secret shown once), a test sent and its delivery with its attempts
 * (a 500, then the 2xx retry) shown as they happen, delete; no console
 * error, every request to the service itself.
 *
 * Without /usr/bin/chromium the file registers one test that says so.
 * DASHBOARD_SCREENSHOTS=<dir> also saves the picture of docs/DASHBOARD.md
 * (`npm run screenshots`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { haveChromium, launchChromium, reportNoBrowser, see, type Browser } from '../helpers/browser';
import { startTestService, type TestService } from '../helpers/service';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS;

if (!haveChromium()) {
  reportNoBrowser('dashboard webhooks e2e');
} else {
  describe('the Webhooks page in Chromium', () => {
    let t: TestService;
    let browser: Browser;
    let page: Page;
    let r: Receiver;
    const problems: string[] = [];

    beforeAll(async () => {
      t = await startTestService({ POOL_ROUNDS: 'false' });
      r = startReceiver();
      r.answer = (n) => (n === 0 ? 500 : 204);
      browser = await launchChromium({ width: 1280, height: 900 });
      browser.ctx.setDefaultTimeout(8000);
      page = browser.ctx.pages()[0] ?? (await browser.ctx.newPage());
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(`${t.url}/app#/webhooks`);
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await page.locator('#webhooks-h').waitFor();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await t?.stop();
      r?.close();
    }, 30_000);

    test('add (secret once), test, deliveries with attempts, delete', async () => {
      expect(await page.title()).toBe('Webhooks · Proxy checker');
      expect(await page.getAttribute('a[data-route="webhooks"]', 'aria-current')).toBe('page');
      await see(page.locator('#webhooks-empty')).toBeVisible();
      await page.click('#webhook-add');
      await see(page.locator('#webhook-form-error')).toHaveText('Enter an http:// or https:// URL.');
      await page.fill('#webhook-url', r.url);
      await page.check('input[name="events"][value="check.completed"]');
      await page.click('#webhook-add');
      await see(page.locator('#webhook-secret')).toContainText('whsec_');
      const secret = /whsec_\S+/.exec((await page.textContent('#webhook-secret')) ?? '')![0];
      r.setSecret(secret);
      await see(page.locator('#webhooks-table tbody tr')).toHaveCount(1);
      await see(page.locator('#webhooks-table tbody tr')).toContainText('check.completed');
      await page.click('#webhooks-table button[data-act="test"]');
      await see(page.locator('#webhook-deliveries')).toBeVisible();
      // the 500 first, then the retry 5 s later, drawn as they happen
      await see(page.locator('#wd-table tbody tr'), 10_000).toContainText('HTTP 500');
      await see(page.locator('#wd-table tbody tr'), 15_000).toContainText('delivered');
      await see(page.locator('#wd-table tbody tr')).toContainText('HTTP 204');
      await see(page.locator('#webhooks-table tbody tr'), 5000).toContainText('UTC'); // its last success
      expect(r.got.map((g) => g.verified)).toEqual([true, true]);
      if (SHOTS) {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, 'dashboard-webhooks.png'), fullPage: true });
      }
      await page.click('#webhooks-table button[data-act="delete"]');
      await see(page.locator('#webhooks-empty')).toBeVisible();
      expect(await page.locator('#webhook-deliveries').isHidden()).toBe(true);
      expect(problems).toEqual([]);
    }, 40_000);
  });
}
