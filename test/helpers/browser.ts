/**
 * Headless Chromium for browser tests: Debian's `chromium` package (never a
 * browser downloaded by playwright), launched through playwright-core with a
 * fresh profile directory, the missing-browser report (passes with a warning,
 * fails under CI=true), and `see(locator)`: polling text/count/visibility
 * checks, since bun:test's expect has no locator matchers.
 */
import { expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator } from 'playwright-core';

/** Debian's chromium; CHROMIUM_PATH overrides it (e.g. to see the missing-browser report). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]);

export function haveChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** Registers the one test a browser suite runs without a browser: says why; fails under CI=true. */
export function reportNoBrowser(suite: string): void {
  test(`${suite}: prerequisites (missing browser: reported here; a failure under CI=true)`, () => {
    const line = `${suite}: ${CHROMIUM} not found; install Debian's browser with: apt-get install -y chromium`;
    if (process.env.CI === 'true') throw new Error(`${line} (CI=true: a missing browser is a failure)`);
    console.warn(`${line} -- browser tests not run`);
    expect(process.env.CI).not.toBe('true');
  });
}

export interface Browser {
  ctx: BrowserContext;
  /** Where downloads land. */
  downloads: string;
  /** Closes the browser and removes its profile and downloads. Safe twice. */
  close(): Promise<void>;
}

export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'pc-chromium-'));
  const downloads = mkdtempSync(join(tmpdir(), 'pc-downloads-'));
  const cleanup = () => {
    for (const d of [profile, downloads]) rmSync(d, { recursive: true, force: true });
  };
  let ctx: BrowserContext;
  try {
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport,
      acceptDownloads: true,
      downloadsPath: downloads,
    });
  } catch (err) {
    cleanup();
    throw new Error(`could not start ${CHROMIUM}`, { cause: err });
  }
  let closed: Promise<void> | null = null;
  return {
    ctx,
    downloads,
    close: () =>
      (closed ??= ctx.close().finally(cleanup)),
  };
}

/** Polling checks on a locator; each throws when its condition is not met within `timeoutMs`. */
export function see(locator: Locator, timeoutMs = 5000) {
  const poll = async (check: () => Promise<boolean>, what: () => Promise<string>) => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await check().catch(() => false)) return;
      await Bun.sleep(50);
    }
    throw new Error(`expected ${locator} ${await what().catch((e) => String(e))}`);
  };
  return {
    toHaveText: (text: string) =>
      poll(async () => (await locator.textContent()) === text, async () => `to have text ${JSON.stringify(text)}, got ${JSON.stringify(await locator.textContent())}`),
    toContainText: (text: string) =>
      poll(async () => ((await locator.textContent()) ?? '').includes(text), async () => `to contain ${JSON.stringify(text)}, got ${JSON.stringify(await locator.textContent())}`),
    toHaveCount: (n: number) => poll(async () => (await locator.count()) === n, async () => `to have ${n} elements, got ${await locator.count()}`),
    toBeVisible: () => poll(() => locator.isVisible(), async () => 'to be visible'),
  };
}
