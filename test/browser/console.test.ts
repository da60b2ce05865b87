import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOperator } from '../../src/app/admin/operators.ts';
import { localDate } from '../../src/domain/time.ts';
import { launchBrowser, screenshot, watchedPage } from '../support/browser.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * The operator console in a real Chromium: sign-in, a wrong token, finding an order by plate with the
 * keyboard, refunding it, crediting a partner, a forged POST refused, a support operator refused a
 * refund, and no script error anywhere. Each page's screenshot goes to docs/screenshots with
 * UPDATE_SCREENSHOTS=1 (the README shows them).
 */
let h: Harness;
let browser: Browser;
let base: string;

beforeAll(async () => {
  h = await startHarness();
  base = await h.listen();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** A completed rca order of the demo partner for vehicle 100000001 (plate CHY999). */
async function completedOrder(): Promise<string> {
  const today = localDate(await h.service.svc.clock.now());
  const id = await paidRcaOrder(h, h.demo, today);
  await h.waitForStatus(id, 'completed');
  return id;
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${base}/console`);
  await expect.poll(() => page.url()).toBe(`${base}/console/sign-in`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/console`);
}

/** The console's own navigation (pages also link to Orders or Partners in their breadcrumbs). */
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

/** Chromium logs every 4xx page load as a console error: the ones a test provokes are expected. */
const unexpected = (errors: string[], ...statuses: number[]) =>
  errors.filter((e) => !statuses.some((s) => e.includes(`the server responded with a status of ${s}`)));

const statusOf = async (id: string) => (await h.call('get-order', { id })).body.status;

it('sends a visitor without a session to sign-in, and refuses a wrong token with 401', async () => {
  const { page, errors } = await watchedPage(browser);
  await page.goto(`${base}/console/orders`);
  expect(page.url()).toBe(`${base}/console/sign-in`);
  await screenshot(page, 'console-sign-in');
  await page.getByLabel('Admin token').fill('not-a-token');
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${base}/console/sign-in` && r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  expect(answer.status()).toBe(401);
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('That token opens nothing');
  expect(unexpected(errors, 401)).toEqual([]);
});

it('signs in, finds an order by plate from the keyboard, refunds it, and signs out', async () => {
  const id = await completedOrder();
  // A partner whose webhook endpoint refuses connections: the Overview names it.
  const south = await h.newPartner({ name: 'Agenția Sud', webhook_url: 'http://localhost:9/polita' });
  const failing = await paidRcaOrder(h, south, localDate(await h.service.svc.clock.now()));
  await expect
    .poll(
      async () =>
        (await h.admin<{ webhook_attempts: unknown[] }>('GET', `/admin/orders/${failing}`)).body
          .webhook_attempts.length,
      { timeout: 15_000 },
    )
    .toBeGreaterThan(0);
  const { page, errors } = await watchedPage(browser);
  await signIn(page, h.adminToken);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
  await expect.poll(() => page.locator('svg.chart').count()).toBe(4);
  expect(await page.getByRole('table').filter({ hasText: 'Agenția Sud' }).count()).toBe(1);
  await screenshot(page, 'console-overview');

  await nav(page, 'Orders').click();
  await page.waitForURL(`${base}/console/orders`);
  // Keyboard only: Tab until the search field has the focus, type the plate, Enter.
  const search = page.getByLabel('Search orders');
  for (let i = 0; i < 30 && !(await search.evaluate((el) => el === el.ownerDocument.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect.poll(() => search.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
  await page.keyboard.type('CHY 999');
  await page.keyboard.press('Enter');
  await expect.poll(() => page.url()).toContain('q=CHY+999');
  const link = page.locator('#results').getByRole('link', { name: id });
  await expect.poll(() => link.count()).toBe(1);
  await screenshot(page, 'console-orders');

  await link.click();
  await page.waitForURL(`${base}/console/orders/${id}`);
  await screenshot(page, 'console-order');
  await page.getByRole('button', { name: 'Refund', exact: true }).click();
  await page.getByLabel('Reason').fill('Customer cancelled by phone');
  await screenshot(page, 'console-order-refund');
  await page.getByRole('button', { name: 'Refund order' }).click();
  await expect.poll(() => page.getByRole('status').textContent()).toContain('The order is refunded.');
  expect(await statusOf(id)).toBe('refunded');
  await expect.poll(() => page.locator('h1 .status').textContent()).toBe('refunded');

  // Refunding again is refused, and the page says why.
  await page.goto(`${base}/console/audit`);
  await expect.poll(() => page.locator('#results tbody tr').first().textContent()).toContain('order.refund');
  const row = page.locator('#results tbody tr').first();
  expect(await row.textContent()).toContain('Admin token');
  expect(await row.textContent()).toContain('console');
  await screenshot(page, 'console-audit');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/console\/sign-in/);
  await page.goto(`${base}/console`);
  expect(page.url()).toBe(`${base}/console/sign-in`);
  expect(errors).toEqual([]);
});

it('creates a partner (its secret shown once) and credits its wallet', async () => {
  const { page, errors } = await watchedPage(browser);
  await signIn(page, h.adminToken);
  await nav(page, 'Partners').click();
  await page.getByRole('link', { name: 'New partner' }).click();
  await page.getByLabel('Name').fill('Agenția Nord');
  await page.getByRole('button', { name: 'Create partner' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('is created');
  expect(await page.locator('#secret').textContent()).toMatch(/^[0-9a-f]{64}$/);
  const partnerId = (await page.locator('#partner-id').textContent())!;

  await nav(page, 'Partners').click();
  await page.getByLabel('Search partners').fill('Nord');
  await page.getByLabel('Search partners').press('Enter');
  const link = page.locator('#results').getByRole('link', { name: 'Agenția Nord' });
  await expect.poll(() => link.count()).toBe(1);
  await screenshot(page, 'console-partners');
  await link.click();
  await page.waitForURL(`${base}/console/partners/${partnerId}`);

  await page.getByLabel('Wallet', { exact: true }).selectOption('online');
  await page.getByLabel('Amount').fill('250.50');
  await page.getByLabel('Reference').fill('WIRE-2026-001');
  await page.getByRole('button', { name: 'Credit', exact: true }).click();
  await expect.poll(() => page.getByRole('status').textContent()).toContain('The wallet is credited.');
  expect(await page.locator('.cards').textContent()).toContain('250.50 MDL');
  expect(await page.locator('#wallet table').textContent()).toContain('WIRE-2026-001');
  await screenshot(page, 'console-partner');

  // A refused credit shows why, with the right status, and keeps what was typed.
  await page.getByLabel('Amount').fill('-5');
  await page.getByLabel('Reference').fill('WIRE-2026-002');
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/credit')),
    page.getByRole('button', { name: 'Credit', exact: true }).click(),
  ]);
  expect(refused.status()).toBe(400);
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('amount must be greater than 0');
  expect(await page.getByLabel('Reference').inputValue()).toBe('WIRE-2026-002');

  const csv = await page.request.get(`${base}/console/partners/${partnerId}/ledger.csv`);
  expect(csv.status()).toBe(200);
  expect(await csv.text()).toContain('WIRE-2026-001');

  await nav(page, 'Settings').click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings');
  await screenshot(page, 'console-settings');
  expect(unexpected(errors, 400)).toEqual([]);
});

it('refuses a POST without the session’s CSRF token (403), changing nothing', async () => {
  const id = await completedOrder();
  const { page, errors } = await watchedPage(browser);
  await signIn(page, h.adminToken);
  for (const form of [{ reason: 'forged' }, { reason: 'forged', _csrf: 'wrong' }] as Record<
    string,
    string
  >[]) {
    const res = await page.request.post(`${base}/console/orders/${id}/refund`, { form });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('CSRF');
  }
  // From another site, even with the token, it is refused.
  const token = await page.locator('input[name=_csrf]').first().inputValue();
  const cross = await page.request.post(`${base}/console/orders/${id}/refund`, {
    form: { reason: 'forged', _csrf: token },
    headers: { origin: 'https://evil.example' },
  });
  expect(cross.status()).toBe(403);
  expect(await statusOf(id)).toBe('completed');
  expect(errors).toEqual([]);
});

it('lets a support operator read, but refuses it a refund with the reason (403)', async () => {
  const id = await completedOrder();
  const op = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Sam Support', role: 'support' });
  const { page, errors } = await watchedPage(browser);
  await signIn(page, op.token);
  expect(await page.locator('header .who').textContent()).toContain('Sam Support');
  await page.goto(`${base}/console/orders/${id}`);
  await expect.poll(() => page.getByRole('button', { name: 'Refund', exact: true }).isDisabled()).toBe(true);
  await screenshot(page, 'console-order-support');

  const token = await page.locator('input[name=_csrf]').first().inputValue();
  const res = await page.request.post(`${base}/console/orders/${id}/refund`, {
    form: { reason: 'support tries', _csrf: token },
  });
  expect(res.status()).toBe(403);
  expect(await res.text()).toContain('The support role cannot refund orders');
  expect(await statusOf(id)).toBe('completed');
  expect(errors).toEqual([]);
});
