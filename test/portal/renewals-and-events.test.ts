import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRenewalNotices } from '../../src/app/renewal-notices.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { get, portalUser, post, startReceiver, type Signed } from './support.ts';

/**
 * The portal's side of decisions 0091 and 0092: Developers' renewal notice and recent events with
 * Resend, Orders' Expiring soon, and an order's Sell again opening Sell filled in.
 */
const TODAY = '2026-11-21';
let h: Harness;
let partner: Creds;
let owner: Signed;
let cashier: Signed;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  h = await startHarness();
  await h.setClock(`${TODAY}T12:00:00+02:00`);
  partner = await h.newPartner({ name: 'Agenția Renewals' });
  owner = await portalUser(h, partner.id, 'owner');
  cashier = await portalUser(h, partner.id, 'cashier');
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

async function completed(start = TODAY): Promise<string> {
  const id = await paidRcaOrder(h, partner, start);
  await h.waitForStatus(id, 'completed', { creds: partner });
  return id;
}

describe('Developers', () => {
  it('sets renewal_notice_days, refusing a number out of range', async () => {
    const page = await get(h, '/portal/developers', owner.cookie);
    expect(page.body).toContain('id="renewal_notice_days"');
    expect(page.body).toMatch(/name="renewal_notice_days"[^>]*value="30"/);
    const saved = await post(h, '/portal/developers/renewals', owner.cookie, { renewal_notice_days: '45' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/portal/developers?done=renewals-saved#renewals');
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body).toMatchObject({
      renewal_notice_days: 45,
    });
    const refused = await post(h, '/portal/developers/renewals', owner.cookie, {
      renewal_notice_days: '400',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(
      'Days before a policy ends must be a whole number from 0 (no notice) to 365.',
    );
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body).toMatchObject({
      renewal_notice_days: 45,
    });
  });

  it('lists recent events, not_subscribed without a URL, and re-sends one with Resend', async () => {
    const id = await completed();
    let page = await get(h, '/portal/developers', owner.cookie);
    const events = page.body.slice(page.body.indexOf('id="events"'), page.body.indexOf('id="deliveries"'));
    expect(events).toContain(`<a href="/portal/orders/${id}">${id}</a>`);
    expect(events).toContain('<td>not subscribed</td>');
    const eventId = new RegExp(
      `<td class="id">(evt_[0-9a-f]{24})</td>\\s*<td>completed</td>\\s*<td><a href="/portal/orders/${id}"`,
    ).exec(events)![1]!;

    await post(h, '/portal/developers/webhook', owner.cookie, { webhook_url: receiver.url });
    const resent = await post(h, '/portal/developers/events/resend', owner.cookie, { id: eventId });
    expect(resent.statusCode).toBe(303);
    expect(resent.headers.location).toBe('/portal/developers?done=event-queued#events');
    await expect
      .poll(() => receiver.received.find((r) => r.headers['x-polita-event-id'] === eventId)?.body, {
        timeout: 15_000,
      })
      .toBe(`{"orderId":"${id}","status":"completed"}`);
    await expect
      .poll(async () => {
        page = await get(h, '/portal/developers', owner.cookie);
        return page.body.includes('<td>delivered</td>');
      })
      .toBe(true);
    // A cashier may not open Developers, nor re-send from it.
    const cashierTry = await post(h, '/portal/developers/events/resend', cashier.cookie, { id: eventId }, {});
    expect(cashierTry.statusCode).toBe(403);
  });
});

describe('Orders and Sell again', () => {
  it('filters Expiring soon by the partner’s notice, and Sell again opens Sell from the day after the end', async () => {
    await h.admin('PATCH', `/admin/partners/${partner.id}`, { renewal_notice_days: 45 });
    const ending = await completed(TODAY); // 2026-11-21 to 2027-11-20: 31 days left on 2027-10-20
    await h.setClock('2027-10-20T12:00:00+03:00');
    try {
      const later = await completed('2027-10-20'); // ends 2028-10-19: not soon
      const soon = await get(h, '/portal/orders?expiring=true', owner.cookie);
      expect(soon.statusCode).toBe(200);
      expect(soon.body).toContain(`>${ending}</a>`);
      expect(soon.body).not.toContain(`>${later}</a>`);
      expect(soon.body).toMatch(/id="expiring" name="expiring" value="true" checked/);
      const all = await get(h, '/portal/orders', owner.cookie);
      expect(all.body).toContain(`>${later}</a>`);

      // The renewal notice of the same order, by the job.
      await sendRenewalNotices(h.service.svc);
      const listed = await h.call<{ events: { order_id: string }[] }>(
        'list-events',
        { types: ['expiring'] },
        partner,
      );
      // The order of the test above ends the same day: both are noticed, the later one is not.
      expect(listed.body.events.map((e) => e.order_id)).toContain(ending);
      expect(listed.body.events.map((e) => e.order_id)).not.toContain(later);

      const order = await get(h, `/portal/orders/${ending}`, cashier.cookie);
      expect(order.body).toContain(`href="/portal/sell?again=${ending}">Sell again</a>`);
      const sell = await get(h, `/portal/sell?again=${ending}`, cashier.cookie);
      expect(sell.statusCode).toBe(200);
      expect(sell.body).toContain('Sell again: the renewal of order');
      expect(sell.body).toMatch(/<option value="rca" selected>/);
      expect(sell.body).toMatch(/name="f.vehicle"[^>]*value="100000001"/);
      expect(sell.body).toContain('name="renew_from" value="2027-11-21"');

      // Through the offers to the order form: its start date is the day after the old end.
      const offers = await post(h, '/portal/sell/offers', cashier.cookie, {
        product: 'rca',
        'f.vehicle': '100000001',
        'f.duration': '365',
        'f.idnx': '2003000000016',
        renew_order: ending,
        renew_from: '2027-11-21',
      });
      expect(offers.statusCode).toBe(200);
      const choose = /<form method="post" action="\/portal\/sell\/details">([\s\S]*?)<\/form>/.exec(
        offers.body,
      )![1]!;
      const hidden = Object.fromEntries(
        [...choose.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
          m[1]!,
          m[2]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&#39;', "'"),
        ]),
      );
      // The renewal travels in the signed sale, as the rest of it does.
      const [payload] = hidden.sale!.split('.') as [string];
      expect(JSON.parse(Buffer.from(payload, 'base64url').toString()).renewal).toEqual({
        orderId: ending,
        startDate: '2027-11-21',
      });
      const formPage = await post(h, '/portal/sell/details', cashier.cookie, { sale: hidden.sale! });
      expect(formPage.statusCode).toBe(200);
      expect(formPage.body).toMatch(/name="f.start_date"[^>]*value="2027-11-21"/);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
  });
});
