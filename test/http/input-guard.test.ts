import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payment, RCA_QUOTE, rcaItem, startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
let start = '';
beforeAll(async () => {
  h = await startHarness();
  const quote = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', RCA_QUOTE);
  start = quote.body.offers[0]!.min_start_date;
});
afterAll(() => h?.close());

const orderCount = async () =>
  (
    await h.service.svc.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n;

/**
 * Strings PostgreSQL cannot store (U+0000, a lone surrogate) and operator fields a route does not
 * know: each a 400 naming the place, nothing stored (decision 0003). These answered 500 before.
 */
describe('input the database cannot store', () => {
  it('refuses a NUL in a create-order field with 400 naming it, and stores nothing', async () => {
    const before = await orderCount();
    const body = `{"customer":{"phone":"+37369123456","name":"Ion\\u0000Popescu"},"products":[${JSON.stringify(rcaItem(start))}]}`;
    const res = await h.call('create-order', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'body/customer/name must not contain U+0000 or an unpaired surrogate',
      message: 'body/customer/name must not contain U+0000 or an unpaired surrogate',
    });
    expect(await orderCount()).toBe(before);
  });

  it('refuses a lone surrogate in confirm-order’s receipt_id, and in an order id', async () => {
    const created = await h.call<{ id: string; price: number }>('create-order', {
      customer: { phone: '+37369123456', name: 'Ion Popescu' },
      products: [rcaItem(start)],
    });
    const pay = JSON.stringify({ id: created.body.id, payment: payment(created.body.price) }).replace(
      /"receipt_id":"RRN/,
      '"receipt_id":"RRN\\ud800',
    );
    const res = await h.call('confirm-order', pay);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('body/payment/receipt_id must not contain U+0000 or an unpaired surrogate');
    expect((await h.call('get-order', { id: created.body.id })).body.status).toBe('draft');

    const byId = await h.call('get-order', '{"id":"IAI\\udc00123456ABC"}');
    expect(byId.status).toBe(400);
    expect(byId.body.message).toBe('body/id must not contain U+0000 or an unpaired surrogate');
  });

  it('keeps a well-formed pair of surrogates (an emoji) and diacritics', async () => {
    const res = await h.call('create-order', {
      customer: { phone: '+37369123456', name: 'Ștefan Țurcanu 🚗' },
      products: [rcaItem(start)],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('refuses a NUL in an operator path parameter', async () => {
    const res = await h.admin('GET', '/admin/orders/IAI%00');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('params/id must not contain U+0000 or an unpaired surrogate');
  });
});

describe('operator bodies', () => {
  it('refuses a field PATCH /admin/partners/:id does not know, naming it, and changes nothing', async () => {
    const p = await h.newPartner({ name: 'Strict SRL' });
    const res = await h.admin('PATCH', `/admin/partners/${p.id}`, { name: 'Renamed', nickname: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'body/nickname is not a field of this request',
      message: 'body/nickname is not a field of this request',
    });
    expect((await h.admin('GET', `/admin/partners/${p.id}`)).body.name).toBe('Strict SRL');
  });

  it('while the partner API keeps ignoring fields it does not know', async () => {
    const res = await h.call('get-offers', { ...RCA_QUOTE, colour: 'red' });
    expect(res.status).toBe(200);
  });
});

describe('a value outside a choice', () => {
  it('is refused with the values the field accepts', async () => {
    const res = await h.admin('POST', '/admin/partners/demo/wallet/credits', {
      wallet: 'savings',
      amount: 1,
      reference: 'r',
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('body/wallet must be one of: online, insurance, promo');
    const quote = await h.call('get-offers', { ...RCA_QUOTE, duration: 17 });
    expect(quote.status).toBe(400);
    expect(quote.body.message).toMatch(/^body\/duration must be one of: (\d+, )*\d+$/);
  });
});
