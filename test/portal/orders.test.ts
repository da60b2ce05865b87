import { CATALOGUES } from '../../src/portal/i18n.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCustomerPhones } from '../../src/db/migrations/0019-customer-phone.ts';
import { localDate } from '../../src/domain/time.ts';
import { rcaItem, startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { extractPdfText } from '../support/pdf-text.ts';
import { get, portalUser, post, type Signed } from './support.ts';

/**
 * Orders in the portal: a partner's people find an order by id, plate or customer phone, read its
 * history, failure reason and webhooks, download its policy again; only their partner's orders, and
 * only owners and developers re-send webhooks.
 */
let h: Harness;
let partner: Creds;
let other: Creds;
let cashier: Signed;
let developer: Signed;
let today: string;
beforeAll(async () => {
  h = await startHarness();
  partner = await h.newPartner({ name: 'Agenția Nord' });
  other = await h.newPartner({ name: 'Agenția Sud' });
  cashier = await portalUser(h, partner.id, 'cashier');
  developer = await portalUser(h, partner.id, 'developer');
  today = localDate(await h.service.svc.clock.now());
});
afterAll(async () => {
  await h?.close();
});

/** The order ids a search lists, in order. */
async function found(cookie: string, query: string): Promise<string[]> {
  const res = await get(h, `/portal/orders${query}`, cookie);
  expect(res.statusCode, res.body).toBe(200);
  const results = res.body.slice(res.body.indexOf('id="results"'));
  return [...results.matchAll(/href="\/portal\/orders\/([A-Z0-9]{12})"/g)].map((m) => m[1]!);
}

const draft = async (creds: Creds, phone = '+37369000000') => {
  const res = await h.call<{ id: string }>(
    'create-order',
    { customer: { phone }, products: [rcaItem(today)] },
    creds,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
};

describe('the order list', () => {
  it('finds the partner’s orders by plate, customer phone and id, never another partner’s', async () => {
    const mine = await paidRcaOrder(h, partner, today);
    await h.waitForStatus(mine, 'completed', { creds: partner });
    const theirs = await paidRcaOrder(h, other, today);
    const phoned = await draft(partner, '+373 69 123 456');

    // The draft is for the same vehicle: newest first.
    expect(await found(cashier.cookie, '?q=CHY+999')).toEqual([phoned, mine]);
    expect(await found(cashier.cookie, '?q=69+123+456')).toEqual([phoned]);
    expect(await found(cashier.cookie, `?q=${mine}`)).toEqual([mine]);
    expect(await found(cashier.cookie, `?q=${theirs}`)).toEqual([]);
    expect(await found(cashier.cookie, '?status=completed')).toEqual([mine]);
    expect(await found(cashier.cookie, '?status=draft&product=rca')).toEqual([phoned]);
    expect(await found(cashier.cookie, '?product=medical')).toEqual([]);
  });

  it('finds a phone however it was typed, in the order and in the search', async () => {
    const p = await h.newPartner();
    const u = await portalUser(h, p.id, 'cashier');
    const national = await draft(p, '069123456');
    const international = await draft(p, '+373 69 123 456');
    const other = await draft(p, '+37369123457');
    for (const q of ['069123456', '%2B37369123456', '00373+69+12+34+56']) {
      expect(await found(u.cookie, `?q=${q}`), q).toEqual([international, national]);
    }
    expect(await found(u.cookie, '?q=069123457')).toEqual([other]);

    // Orders from before migration 19 are given theirs by it.
    const db = h.service.svc.db;
    await db.updateTable('orders').set({ customer_phone: null }).where('partner_id', '=', p.id).execute();
    // Without it, only the digits as typed: the national form is missed.
    expect(await found(u.cookie, '?q=%2B37369123456')).toEqual([international]);
    await backfillCustomerPhones(db);
    expect(await found(u.cookie, '?q=%2B37369123456')).toEqual([international, national]);
  });

  it('pages 25 at a time, newest first, and refuses a bad filter with the reason', async () => {
    const p = await h.newPartner();
    const u = await portalUser(h, p.id, 'accountant');
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) ids.push(await draft(p));
    const res = await get(h, '/portal/orders', u.cookie);
    const first = await found(u.cookie, '');
    expect(first).toHaveLength(25);
    const next = /<a href="(\/portal\/orders\?cursor=[^"]+)">Next page<\/a>/.exec(res.body)![1]!;
    const second = await found(u.cookie, next.replace('/portal/orders', '').replaceAll('&amp;', '&'));
    expect([...first, ...second].sort()).toEqual([...ids].sort());

    const bad = await get(h, '/portal/orders?status=lost', u.cookie);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('<p class="error" role="alert">Choose a status from the list.</p>');
    const ru = await get(h, '/portal/orders?product=lottery', u.cookie, { 'accept-language': 'ru' });
    expect(ru.statusCode).toBe(400);
    expect(ru.body).toContain(`<p class="error" role="alert">${CATALOGUES.ru['reason.productFilter']}</p>`);
  });
});

describe('an order’s page', () => {
  it('shows the history, the webhooks and the policy, which downloads again', async () => {
    const id = await paidRcaOrder(h, partner, today);
    await h.waitForStatus(id, 'completed', { creds: partner });
    const page = await get(h, `/portal/orders/${id}`, cashier.cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<strong>completed</strong>');
    expect(page.body).toContain('Webhook events');
    // A cashier reads webhooks but does not re-send them.
    expect(page.body).not.toContain('Resend webhook');
    const pdf = await get(h, `/portal/orders/${id}/policy/0`, cashier.cookie);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toBe(`attachment; filename="${id}-1.pdf"`);
    expect(await extractPdfText(pdf.rawPayload)).toContain('CHY999');
  });

  it('shows why an order failed, and a refunded order’s policy is cancelled (410)', async () => {
    const failed = await paidRcaOrder(h, partner, today, { item: { vehicle: '100000010' } });
    await h.waitForStatus(failed, 'failed', { creds: partner });
    const page = await get(h, `/portal/orders/${failed}`, cashier.cookie);
    expect(page.body).toContain(
      '<dt>Failure reason</dt><dd>The provider refused to issue the policy: the provider refused this vehicle.</dd>',
    );

    const done = await paidRcaOrder(h, partner, today);
    await h.waitForStatus(done, 'completed', { creds: partner });
    expect(
      (await h.admin('POST', `/admin/orders/${done}/refund`, { reason: 'Customer cancelled' })).status,
    ).toBe(200);
    const pdf = await get(h, `/portal/orders/${done}/policy/0`, cashier.cookie);
    expect(pdf.statusCode).toBe(410);
    expect(pdf.body).toContain('Policy cancelled: the order was refunded.');
  });

  it('answers another partner’s order and its policy 404, as an order that does not exist', async () => {
    const theirs = await paidRcaOrder(h, other, today);
    await h.waitForStatus(theirs, 'completed', { creds: other });
    for (const url of [
      `/portal/orders/${theirs}`,
      `/portal/orders/${theirs}/policy/0`,
      '/portal/orders/IAI000000AAA',
    ]) {
      const res = await get(h, url, developer.cookie);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).toContain('Order not found');
    }
  });
});

describe('Resend webhook', () => {
  it('re-sends for a developer, in the audit log with the user and the partner; a cashier is refused (403)', async () => {
    const id = await paidRcaOrder(h, partner, today);
    await h.waitForStatus(id, 'completed', { creds: partner });
    const attempts = async () =>
      (await h.admin<{ webhook_attempts: unknown[] }>('GET', `/admin/orders/${id}`)).body.webhook_attempts
        .length;
    const before = await attempts();

    const refused = await post(h, `/portal/orders/${id}/resend`, cashier.cookie);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Re-sending webhooks is for the owner and developer roles.');
    expect(await attempts()).toBe(before);

    const page = await get(h, `/portal/orders/${id}`, developer.cookie);
    expect(page.body).toContain('Resend webhook');
    const res = await post(h, `/portal/orders/${id}/resend`, developer.cookie);
    expect(res.statusCode).toBe(303);
    // No webhook URL: the attempt is made and recorded, and fails.
    expect(res.headers.location).toBe(`/portal/orders/${id}?done=resend-failed`);
    expect(await attempts()).toBe(before + 1);
    const audit = await h.admin<{ entries: Record<string, unknown>[] }>('GET', `/admin/audit?target=${id}`);
    expect(audit.body.entries[0]).toMatchObject({
      action: 'order.resend_webhook',
      actor: `portal:${partner.id}:${developer.email}`,
      role: 'developer',
      via: 'portal',
    });
  });
});

describe('finding 5 (third security round): cashiers and accountants see the webhook URL on order pages', () => {
  it('shows the URL, and its host in errors, to owners and developers only', async () => {
    const p = await h.newPartner({ name: 'Agenția Vest' });
    const url = 'http://hooks.vest.example/polita';
    expect((await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_url: url })).status).toBe(200);
    const id = await paidRcaOrder(h, p, today);
    await h.waitForStatus(id, 'completed', { creds: p });
    expect((await h.admin('POST', `/admin/orders/${id}/webhook`)).status).toBe(200);
    const dev = await portalUser(h, p.id, 'developer');
    expect((await get(h, `/portal/orders/${id}`, dev.cookie)).body).toContain('hooks.vest.example');
    for (const role of ['cashier', 'accountant']) {
      const user = await portalUser(h, p.id, role);
      const page = await get(h, `/portal/orders/${id}`, user.cookie);
      expect(page.statusCode, role).toBe(200);
      expect(page.body, role).toContain('id="webhooks"');
      expect(page.body, role).not.toContain('hooks.vest.example');
    }
  });
});
