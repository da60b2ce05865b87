import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startHarness, type Creds, type Harness } from './harness.ts';

/**
 * Debian's Chromium driven by playwright-core (no browser download): CHROMIUM_PATH, or
 * /usr/bin/chromium (`apt-get install -y chromium`). Without it the browser tests fail, saying so.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(
      `No Chromium at ${executablePath}: the browser tests need Debian's chromium (apt-get install -y chromium) or CHROMIUM_PATH`,
    );
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * Screenshots: with UPDATE_SCREENSHOTS=1 into docs/screenshots (the README shows them, and they are
 * committed); otherwise into a scratch directory, so a test run leaves the tree as it was.
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../../docs/screenshots/', import.meta.url)
  : pathToFileURL(join(tmpdir(), 'polita-screenshots/'));

/** A page that records every script error and console error, for a test to assert there were none. */
export async function watchedPage(
  browser: Browser,
  /** What the browser says it reads (Accept-Language, navigator.language): English unless told. */
  locale = 'en-GB',
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 }, locale });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  // Nothing the page loads may leave loopback (the console and docs work offline).
  await page.route(/^(?!https?:\/\/(127\.0\.0\.1|localhost)[:/])/, (route) => {
    errors.push(`request outside loopback: ${route.request().url()}`);
    return route.abort();
  });
  return { page, errors };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname });
}

/**
 * The sales desk's world: a service listening on loopback, a Chromium, and a partner named `name`
 * whose online wallet the operator credited with 20,000 MDL (as `reference`).
 */
export async function deskWithCredit(
  name: string,
  reference: string,
): Promise<{ h: Harness; base: string; browser: Browser; shop: Creds }> {
  const h = await startHarness();
  const base = await h.listen();
  const browser = await launchBrowser();
  const shop = await h.newPartner({ name });
  await h.admin('POST', `/admin/partners/${shop.id}/wallet/credits`, {
    wallet: 'online',
    amount: 20_000,
    reference,
  });
  return { h, base, browser, shop };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core finds no WCAG 2.1 A/AA violation on the page (each one it finds is shown, cut to 600 characters). */
export async function accessible(page: Page): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: object) => Promise<{ violations: unknown[] }> } })
      .axe;
    const r = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return r.violations;
  });
  expect(
    violations.map((v) => JSON.stringify(v).slice(0, 600)),
    page.url(),
  ).toEqual([]);
}
