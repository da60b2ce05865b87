import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../multiprocess/process.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { launchBrowser, screenshot, watchedPage } from '../support/browser.ts';

/** /docs in a real Chromium: served offline, and Try it out signs a sandbox request in the page. */
let h: Harness;
let browser: Browser;
let base: string;

beforeAll(async () => {
  // The page's server is PUBLIC_BASE_URL (never the Host it was asked with): the address it is served on.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await startHarness({ env: { PUBLIC_BASE_URL: base } });
  await h.service.app.listen({ port, host: '127.0.0.1' });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

it('signs a get-offers request typed into Try it out and shows the offers', async () => {
  const { page, errors } = await watchedPage(browser);
  await page.goto(`${base}/docs`);
  await page.getByLabel('Partner id').fill(h.demo.id);
  await page.getByLabel('Partner secret').fill(h.demo.secret);
  await page.getByRole('button', { name: 'Sign with these' }).click();
  await expect.poll(() => page.locator('#polita-signing').textContent()).toContain(`Signing as ${h.demo.id}`);

  const op = page.locator('#operations-partner-getOffers');
  await op.locator('.opblock-summary').click();
  await op.getByRole('button', { name: 'Try it out' }).click();
  await op.getByRole('button', { name: 'Execute' }).click();
  const status = op.locator('.live-responses-table .response .response-col_status').first();
  await expect.poll(() => status.textContent(), { timeout: 10_000 }).toContain('200');
  await expect
    .poll(() => op.locator('.live-responses-table .microlight').first().textContent())
    .toContain('offers');
  await screenshot(page, 'docs-try-it-out');
  expect(errors).toEqual([]);
});
