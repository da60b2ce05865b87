import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { completedOrder, mdItem, rcaOrder } from '../after-sale/support.ts';
import { launchBrowser, screenshot, watchedPage } from '../support/browser.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';

/**
 * Cancel policy and Correct on the portal's order page, in a real Chromium: each shows its preview
 * (the refund, the new values) before anything changes, then the confirmation changes the order; an
 * accountant sees neither button. Screenshots to docs/screenshots with UPDATE_SCREENSHOTS=1.
 */
let h: Harness;
let browser: Browser;
let base: string;
let partner: Creds;
const PASSWORD = 'copper kettle winter 1987';

beforeAll(async () => {
  h = await startHarness();
  await h.setClock('2026-12-01T10:00:00+02:00');
  base = await h.listen();
  browser = await launchBrowser();
  partner = await h.newPartner({ name: 'Agenția Sud' });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function userPage(email: string, role: string): Promise<{ page: Page; errors: string[] }> {
  const res = await h.admin<{ invitation_url: string }>('POST', `/admin/partners/${partner.id}/users`, {
    email,
    role,
  });
  expect(res.status).toBe(201);
  const opened = await watchedPage(browser);
  await opened.page.goto(`${base}${new URL(res.body.invitation_url).pathname}`);
  await opened.page.getByLabel('Password').fill(PASSWORD);
  await opened.page.getByRole('button', { name: 'Set password' }).click();
  await opened.page.waitForURL(/\/portal\/(sell|orders)$/);
  return opened;
}

/** Money as the portal writes it in English (en-GB, the pages' locale here). */
const mdl = (n: number) =>
  new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'MDL', currencyDisplay: 'code' }).format(n);

const statusOf = (page: Page) => page.locator('h1 .status').textContent();

it('a cashier previews the cancellation’s refund, nothing changing, then confirms it', async () => {
  const { id, price } = await rcaOrder(h, partner, '2026-12-05', 'customer');
  const { page, errors } = await userPage('casa@sud.example', 'cashier');
  await page.goto(`${base}/portal/orders/${id}`);
  await page.getByRole('button', { name: 'Cancel policy' }).click();
  const preview = page.locator('#cancel-preview');
  await expect
    .poll(() => preview.textContent())
    .toContain(`Cancelling refunds ${mdl(price)} to the customer`);
  expect(await statusOf(page)).toBe('completed');
  expect((await h.call<{ status: string }>('get-order', { id }, partner)).body.status).toBe('completed');
  await screenshot(page, 'portal-cancel-preview');

  await page.getByRole('button', { name: 'Confirm cancellation' }).click();
  await page.waitForURL(/\?done=cancelled$/);
  expect(await page.getByRole('status').textContent()).toBe(
    'The policy is cancelled and the order refunded.',
  );
  expect(await statusOf(page)).toBe('refunded');
  expect(await page.locator('dl.facts').textContent()).toContain('due to the customer');
  expect((await h.call<{ status: string }>('get-order', { id }, partner)).body.status).toBe('refunded');
  const audit = await h.admin<{ entries: { action: string; actor: string; via: string }[] }>(
    'GET',
    `/admin/audit?target=${id}`,
  );
  expect(audit.body.entries).toContainEqual(
    expect.objectContaining({
      action: 'order.cancel',
      actor: `portal:${partner.id}:casa@sud.example`,
      via: 'portal',
    }),
  );
  expect(errors).toEqual([]);
});

it('an owner corrects a vignette’s plate: the preview first, then the policy issued again', async () => {
  const { id } = await completedOrder(h, partner, [mdItem('2026-12-10')], 'customer');
  const { page, errors } = await userPage('ana@sud.example', 'owner');
  await page.goto(`${base}/portal/orders/${id}`);
  await page.getByLabel('Plate number').fill('B CD 5678');
  await page.getByRole('button', { name: 'Correct', exact: true }).click();
  await expect
    .poll(() => page.locator('#correct-preview').textContent())
    .toContain('The policy will be issued again');
  expect(await page.locator('#after-sale dl.facts').textContent()).toContain('B CD 5678');
  const before = await h.call<{ products: { registration_number: string }[] }>('get-order', { id }, partner);
  expect(before.body.products[0]!.registration_number).toBe('B AB 1234');
  await screenshot(page, 'portal-correct-preview');

  await page.getByRole('button', { name: 'Confirm correction' }).click();
  await page.waitForURL(/\?done=corrected$/);
  expect(await page.getByRole('status').textContent()).toBe('The policy is corrected and issued again.');
  expect(await page.locator('dl.facts').textContent()).toContain('Corrected');
  const after = await h.call<{ products: { registration_number: string }[] }>('get-order', { id }, partner);
  expect(after.body.products[0]!.registration_number).toBe('B CD 5678');
  expect(errors).toEqual([]);
});

it('shows the refusal on the page when the insurer refuses, and an accountant neither button', async () => {
  const { id } = await rcaOrder(h, partner, '2026-12-05', 'customer', '100000012');
  const { page } = await userPage('sef@sud.example', 'owner');
  await page.goto(`${base}/portal/orders/${id}`);
  await page.getByRole('button', { name: 'Cancel policy' }).click();
  await page.getByRole('button', { name: 'Confirm cancellation' }).click();
  await expect
    .poll(() => page.getByRole('alert').textContent())
    .toContain('The insurer refused the cancellation');
  expect(await statusOf(page)).toBe('completed');

  const accountant = await userPage('cont@sud.example', 'accountant');
  await accountant.page.goto(`${base}/portal/orders/${id}`);
  expect(await accountant.page.getByRole('button', { name: 'Cancel policy' }).count()).toBe(0);
  expect(await accountant.page.getByRole('button', { name: 'Correct', exact: true }).count()).toBe(0);
});
