import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { launchBrowser, screenshot, watchedPage } from '../support/browser.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { startReceiver } from '../portal/support.ts';

/**
 * The partner portal in a real Chromium: an invitation accepted and a sign-in, a wrong password and an
 * unknown email answered alike, an order found by plate from the keyboard, the wallet's CSV, a secret
 * rotated (both secrets working, then the old one retired), a test webhook to a receiver on 127.0.0.1,
 * a cashier refused Developers, another partner's order answering 404, and no script error anywhere.
 * Each page's screenshot goes to docs/screenshots with UPDATE_SCREENSHOTS=1 (the partner guide shows
 * them).
 */
let h: Harness;
let browser: Browser;
let base: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let nord: Creds;
const PASSWORD = 'copper kettle winter 1987';

beforeAll(async () => {
  receiver = await startReceiver();
  h = await startHarness();
  base = await h.listen();
  browser = await launchBrowser();
  nord = await h.newPartner({ name: 'Agenția Nord' });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  await receiver?.close();
});

/** The operator's invitation of a user of `partnerId`: the link's path on the listening service. */
async function invitation(partnerId: string, email: string, role: string): Promise<string> {
  const res = await h.admin<{ invitation_url: string }>('POST', `/admin/partners/${partnerId}/users`, {
    email,
    role,
  });
  expect(res.status).toBe(201);
  return `${base}${new URL(res.body.invitation_url).pathname}`;
}

async function accept(page: Page, link: string, shot?: string, home = 'orders'): Promise<void> {
  await page.goto(link);
  await page.getByLabel('Password').fill(PASSWORD);
  if (shot) await screenshot(page, shot);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL(`${base}/portal/${home}`);
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/portal`);
  await expect.poll(() => page.url()).toBe(`${base}/portal/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The portal's own navigation. */
const nav = (page: Page) => page.getByRole('navigation', { name: 'Portal' });

/** Chromium logs every 4xx page load as a console error: the ones a test provokes are expected. */
const unexpected = (errors: string[], ...statuses: number[]) =>
  errors.filter((e) => !statuses.some((s) => e.includes(`the server responded with a status of ${s}`)));

it('accepts an invitation, signs out, and signs in again; a wrong password and an unknown email are answered alike', async () => {
  const link = await invitation(nord.id, 'ana@nord.example', 'owner');
  const { page, errors } = await watchedPage(browser);
  await accept(page, link, 'portal-invitation');
  expect(await nav(page).getByRole('link').allTextContents()).toEqual([
    'Sell',
    'Orders',
    'Wallet',
    'Developers',
    'Team',
  ]);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/portal\/sign-in\?done=signed-out$/);
  await expect.poll(() => page.getByRole('status').textContent()).toBe('You are signed out.');

  const answers: { status: number; text: string | null }[] = [];
  for (const [email, password] of [
    ['ana@nord.example', 'not the password, surely'],
    ['nobody@nord.example', PASSWORD],
  ]) {
    await page.goto(`${base}/portal/sign-in`);
    await page.getByLabel('Email').fill(email!);
    await page.getByLabel('Password').fill(password!);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/portal/sign-in` && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    answers.push({ status: answer.status(), text: await page.getByRole('alert').textContent() });
  }
  expect(answers[0]).toEqual({
    status: 401,
    text: 'That email and password do not match an account: check both and try again.',
  });
  expect(answers[1]).toEqual(answers[0]);
  await page.getByLabel('Email').fill('ana@nord.example');
  await page.getByLabel('Password').fill(PASSWORD);
  await screenshot(page, 'portal-sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/portal/orders`);
  expect(unexpected(errors, 401)).toEqual([]);
});

it('finds an order by plate from the keyboard, shows it, and downloads its policy again', async () => {
  const id = await paidRcaOrder(h, nord, localDate(await h.service.svc.clock.now()));
  await h.waitForStatus(id, 'completed', { creds: nord });
  const { page, errors } = await watchedPage(browser);
  await signIn(page, 'ana@nord.example', PASSWORD);
  await page.waitForURL(`${base}/portal/orders`);
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
  await screenshot(page, 'portal-orders');

  await link.click();
  await page.waitForURL(`${base}/portal/orders/${id}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(id);
  await screenshot(page, 'portal-order');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download policy' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe(`${id}-1.pdf`);
  expect(
    readFileSync((await download.path())!)
      .subarray(0, 5)
      .toString(),
  ).toBe('%PDF-');
  expect(errors).toEqual([]);
});

it('answers another partner’s order 404', async () => {
  const sud = await h.newPartner({ name: 'Agenția Sud' });
  const theirs = await paidRcaOrder(h, sud, localDate(await h.service.svc.clock.now()));
  const { page, errors } = await watchedPage(browser);
  await signIn(page, 'ana@nord.example', PASSWORD);
  await page.waitForURL(`${base}/portal/orders`);
  const res = await page.goto(`${base}/portal/orders/${theirs}`);
  expect(res!.status()).toBe(404);
  expect(await page.getByRole('alert').textContent()).toBe('Order not found');
  expect(unexpected(errors, 404)).toEqual([]);
});

it('exports the wallet’s statement as CSV', async () => {
  await h.admin('POST', `/admin/partners/${nord.id}/wallet/credits`, {
    wallet: 'online',
    amount: 1500,
    reference: 'WIRE-2026-117',
  });
  const { page, errors } = await watchedPage(browser);
  await signIn(page, 'ana@nord.example', PASSWORD);
  await nav(page).getByRole('link', { name: 'Wallet' }).click();
  await page.waitForURL(`${base}/portal/wallet`);
  await expect.poll(() => page.locator('#ledger table').textContent()).toContain('WIRE-2026-117');
  await screenshot(page, 'portal-wallet');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export CSV' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(
    new RegExp(`^statement-${nord.id}-\\d{4}-\\d\\d-01-\\d{4}-\\d\\d-\\d\\d\\.csv$`),
  );
  const csv = readFileSync((await download.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toBe('date,wallet,kind,amount,balance,order_id,reference,actor,entry_id');
  expect(csv).toContain('WIRE-2026-117');
  expect(errors).toEqual([]);
});

it('rotates the secret (both work), retires the old one, and sends a test webhook to 127.0.0.1', async () => {
  const balance = async (c: Creds) => (await h.call('get-balance', {}, c)).status;
  const { page, errors } = await watchedPage(browser);
  await signIn(page, 'ana@nord.example', PASSWORD);
  await nav(page).getByRole('link', { name: 'Developers' }).click();
  await page.waitForURL(`${base}/portal/developers`);

  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Your new secret');
  const secret = (await page.locator('#secret').textContent())!;
  expect(secret).toMatch(/^[0-9a-f]{64}$/);
  await screenshot(page, 'portal-secret');
  const fresh = { id: nord.id, secret };
  expect(await balance(nord)).toBe(200);
  expect(await balance(fresh)).toBe(200);

  await page.getByRole('link', { name: 'Back to Developers' }).click();
  await page.getByRole('button', { name: 'Retire old secret' }).click();
  await expect
    .poll(() => page.getByRole('status').textContent())
    .toBe('The old secret is retired: only the newest works now.');
  expect(await balance(nord)).toBe(403);
  expect(await balance(fresh)).toBe(200);
  nord = fresh;

  await page.getByLabel('Webhook URL').fill(receiver.url);
  await page.getByLabel('failed').check();
  await page.locator('#webhook').getByRole('button', { name: 'Save', exact: true }).click();
  await expect.poll(() => page.getByRole('status').textContent()).toBe('The webhook settings are saved.');
  await page.getByRole('button', { name: 'Send test event' }).click();
  await expect.poll(() => page.getByRole('status').textContent()).toBe('The test event was delivered.');
  expect(receiver.received.at(-1)!.body).toBe('{"orderId":"TST000000TST","status":"test"}');
  // An order completes: its delivery is listed with its status.
  const id = await paidRcaOrder(h, nord, localDate(await h.service.svc.clock.now()));
  await h.waitForStatus(id, 'completed', { creds: nord });
  await expect.poll(() => receiver.received.some((r) => r.body.includes(id)), { timeout: 15_000 }).toBe(true);
  await expect
    .poll(
      async () => {
        await page.goto(`${base}/portal/developers`);
        return page.locator('#deliveries tbody tr').first().textContent();
      },
      { timeout: 10_000 },
    )
    .toContain('delivered');
  await screenshot(page, 'portal-developers');
  expect(errors).toEqual([]);
});

it('invites a cashier from Team, who is refused the Developers page (403)', async () => {
  const { page, errors } = await watchedPage(browser);
  await signIn(page, 'ana@nord.example', PASSWORD);
  await nav(page).getByRole('link', { name: 'Team' }).click();
  await page.waitForURL(`${base}/portal/team`);
  await page.getByLabel('Email').fill('ion@nord.example');
  await page.getByLabel('Role').selectOption('cashier');
  await screenshot(page, 'portal-team');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await expect
    .poll(() => page.getByRole('heading', { level: 1 }).textContent())
    .toBe('ion@nord.example is invited');
  const link = (await page.locator('#invitation-url').textContent())!;
  await screenshot(page, 'portal-invited');

  // Another browser context (its own cookies): the cashier's.
  const { page: other, errors: otherErrors } = await watchedPage(browser);
  await accept(other, `${base}${new URL(link).pathname}`, undefined, 'sell');
  expect(await nav(other).getByRole('link').allTextContents()).toEqual(['Sell', 'Orders']);
  const res = await other.goto(`${base}/portal/developers`);
  expect(res!.status()).toBe(403);
  expect(await other.getByRole('alert').textContent()).toBe(
    'Developers is not for your role (cashier). Ask an owner of your account.',
  );
  expect(errors).toEqual([]);
  expect(unexpected(otherErrors, 403)).toEqual([]);
});

it('works without JavaScript: sign-in, a search, a form that changes something', async () => {
  const page = await browser.newPage({ javaScriptEnabled: false, viewport: { width: 1366, height: 768 } });
  try {
    await signIn(page, 'ana@nord.example', PASSWORD);
    await page.waitForURL(`${base}/portal/orders`);
    await page.getByLabel('Search orders').fill('CHY999');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=CHY999/);
    expect(await page.locator('#results tbody tr').count()).toBeGreaterThan(0);
    await page.goto(`${base}/portal/developers`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('The test event was delivered.');
  } finally {
    await page.close();
  }
});
