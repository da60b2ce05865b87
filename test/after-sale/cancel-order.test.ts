import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Creds, Harness } from '../support/harness.ts';
import {
  completedOrder,
  expectBooksClean,
  harnessAtNow,
  NOW,
  mdItem,
  onlineBalance,
  orderState,
  rcaOrder,
} from './support.ts';

let h: Harness;
beforeAll(async () => (h = await harnessAtNow()));
afterAll(() => h?.close());

interface Preview {
  message?: string;
  id: string;
  cancellable: boolean;
  refund?: { amount: number; fee: number; currency: string; to: string };
  quote_id?: string;
  valid_until?: string;
  reason?: string;
}

const preview = (id: string, creds: Creds = h.demo) => h.call<Preview>('cancel-order', { id }, creds);
const confirm = (id: string, quote_id: string, creds: Creds = h.demo) =>
  h.call('cancel-order', { id, quote_id }, creds);

describe('cancel-order before the policy starts', () => {
  it('previews the full refund to the wallet and changes nothing', async () => {
    await h.setClock(NOW);
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const before = await onlineBalance(h, h.demo);
    const stateBefore = await orderState(h, id);
    const p = await preview(id);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect(p.body).toEqual({
      id,
      cancellable: true,
      refund: { amount: price, fee: 0, currency: 'MDL', to: 'wallet' },
      quote_id: expect.stringMatching(/^cq_[0-9a-f]{32}$/),
      valid_until: expect.stringMatching(/^2026-12-01T10:10:0\d\.\d{3}\+02:00$/),
    });
    expect(await onlineBalance(h, h.demo)).toBe(before);
    expect(await orderState(h, id)).toEqual(stateBefore);
  });

  it('confirms with the quote: refunded, the money back on the wallet, the books clean, the PDF gone', async () => {
    await h.setClock(NOW);
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const completed = await h.call<{ products: { file: string }[] }>('get-order', { id });
    const file = completed.body.products[0]!.file.replace('http://polita.test', '');
    const before = await onlineBalance(h, h.demo);
    const p = await preview(id);
    const c = await confirm(id, p.body.quote_id!);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({
      id,
      status: 'refunded',
      failure_reason: `Cancelled by the partner: ${price.toFixed(2)} MDL refunded to the wallet`,
      refund: {
        amount: price,
        fee: 0,
        currency: 'MDL',
        to: 'wallet',
        at: expect.stringMatching(/^2026-12-01T10:00:0\d\.\d{3}\+02:00$/),
      },
    });
    expect(await onlineBalance(h, h.demo)).toBeCloseTo(before + price, 2);
    const got = await h.call('get-order', { id });
    expect(got.body).toEqual(c.body);
    const state = await orderState(h, id);
    expect(state.ledger).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'refund', amount: price })]),
    );
    expect(state.history).toEqual(
      expect.arrayContaining([expect.objectContaining({ to: 'refunded', actor: `partner:${h.demo.id}` })]),
    );
    expect((await h.service.app.inject({ url: file })).statusCode).toBe(410);
    await expectBooksClean(h);

    // The same confirmation again: the same order, nothing booked twice.
    const again = await confirm(id, p.body.quote_id!);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(c.body);
    expect(await onlineBalance(h, h.demo)).toBeCloseTo(before + price, 2);
    await expectBooksClean(h);

    const audit = await h.admin<{ entries: { action: string; actor: string; via: string }[] }>(
      'GET',
      `/admin/audit?target=${id}`,
    );
    expect(audit.body.entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'order.cancel', actor: `partner:${h.demo.id}`, via: 'api' }),
      ]),
    );
  });

  it('refunds a customer-paid order to the customer, nothing moving in the wallet', async () => {
    await h.setClock(NOW);
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'customer');
    const before = await onlineBalance(h, h.demo);
    const p = await preview(id);
    expect(p.body.refund).toEqual({ amount: price, fee: 0, currency: 'MDL', to: 'customer' });
    const c = await confirm(id, p.body.quote_id!);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({
      status: 'refunded',
      failure_reason: `Cancelled by the partner: ${price.toFixed(2)} MDL to be refunded to the customer by the partner`,
      refund: { amount: price, fee: 0, to: 'customer' },
    });
    expect(await onlineBalance(h, h.demo)).toBe(before);
    await expectBooksClean(h);

    // On the statement, beside the ledger: owed to the customer, nothing in the balances.
    const url = `/admin/partners/${h.demo.id}/wallet/statement?from=2026-12-01&to=2026-12-01`;
    const statement = await h.admin<{ customer_refunds: unknown[]; entries: { order_id: string | null }[] }>(
      'GET',
      url,
    );
    expect(statement.body.customer_refunds).toContainEqual({
      at: expect.any(String),
      order_id: id,
      amount: price,
      fee: 0,
      actor: `partner:${h.demo.id}`,
    });
    expect(statement.body.entries.filter((e) => e.order_id === id)).toEqual([]);
    const csv = await h.service.app.inject({
      url: `${url}&format=csv`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(csv.body).toMatch(
      new RegExp(`\\r\\n[^,]+,customer,refund_due_to_customer,${price},,${id},,partner:${h.demo.id},\\r\\n`),
    );
  });
});

describe('cancel-order from the policy’s first day', () => {
  it('refunds an rca pro rata, the days after today over the policy’s days, less 10 % of that part', async () => {
    await h.setClock(NOW);
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-01', 'wallet');
    // 100 days later: 2027-03-11. The policy runs 2026-12-01 … 2027-11-30 (365 days); 264 days are left.
    await h.setClock('2027-03-11T09:00:00+02:00');
    const p = await preview(id);
    const bani = Math.round(price * 100);
    const part = Math.floor((2 * bani * 264 + 365) / (2 * 365));
    const fee = Math.floor((2 * part * 10 + 100) / (2 * 100));
    expect(p.body).toMatchObject({
      cancellable: true,
      refund: { amount: (part - fee) / 100, fee: fee / 100, currency: 'MDL', to: 'wallet' },
    });
    const before = await onlineBalance(h, h.demo);
    const c = await confirm(id, p.body.quote_id!);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({ refund: { amount: (part - fee) / 100, fee: fee / 100 } });
    expect(await onlineBalance(h, h.demo)).toBeCloseTo(before + (part - fee) / 100, 2);
    await expectBooksClean(h);
  });

  it('says a vignette cannot be cancelled once valid, and changes nothing', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-01')], 'wallet');
    const p = await preview(id);
    expect(p.status).toBe(200);
    expect(p.body).toEqual({
      id,
      cancellable: false,
      reason: 'A vignette:md policy cannot be cancelled from its first day (2026-12-01)',
    });
  });

  it('cancels a multi-product order whole or not at all', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(
      h,
      h.demo,
      [mdItem('2026-12-01'), { ...(await import('../support/harness.ts')).rcaItem('2026-12-03') }],
      'wallet',
    );
    const p = await preview(id);
    expect(p.body).toMatchObject({ cancellable: false, reason: expect.stringContaining('vignette:md') });
  });
});

describe('cancel-order refusals', () => {
  it('answers 502 when the insurer refuses, and changes nothing', async () => {
    await h.setClock(NOW);
    const { id } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet', '100000012');
    const before = await onlineBalance(h, h.demo);
    const state = await orderState(h, id);
    const p = await preview(id);
    const c = await confirm(id, p.body.quote_id!);
    expect(c.status).toBe(502);
    expect(c.body).toEqual({
      statusCode: 502,
      error: 'The insurer refused the cancellation: the rca insurer does not cancel policies of this vehicle',
      message:
        'The insurer refused the cancellation: the rca insurer does not cancel policies of this vehicle',
    });
    expect(await onlineBalance(h, h.demo)).toBe(before);
    expect(await orderState(h, id)).toEqual(state);
  });

  it('answers 404 for an unknown order and for another partner’s, alike', async () => {
    await h.setClock(NOW);
    const { id } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const other = await h.newPartner();
    const unknown = await preview('RCA-NOPE');
    const foreign = await preview(id, other);
    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect(unknown.body.message).toBe('Order not found');
    const p = await preview(id);
    const stolen = await confirm(id, p.body.quote_id!, other);
    expect(stolen.status).toBe(404);
    expect((await orderState(h, id)).status).toBe('completed');
  });

  it('refuses a draft, an order being issued and a refunded order with their status', async () => {
    await h.setClock(NOW);
    const draft = await h.call<{ id: string }>('create-order', {
      customer: { phone: '+37369000000' },
      products: [(await import('../support/harness.ts')).rcaItem('2026-12-05')],
    });
    const d = await preview(draft.body.id);
    expect(d.status).toBe(400);
    expect(d.body.message).toBe('Only a completed order can be cancelled');

    // A vignette:eu is issued after a visible processing stage: cancelling it meanwhile is refused.
    const eu = await h.call<{ id: string }>('create-order', {
      customer: { phone: '+37369000000', name: 'Ion Popescu' },
      products: [
        {
          product: 'vignette:eu',
          country: 'HU',
          validity: '10d',
          start_date: '2026-12-10',
          vehicle: '100000001',
        },
      ],
    });
    expect(eu.status, JSON.stringify(eu.body)).toBe(200);
    expect((await h.call('pay-order-from-balance', { id: eu.body.id })).status).toBe(200);
    const busy = await preview(eu.body.id);
    expect(busy.status).toBe(409);
    expect(busy.body.message).toBe('Issuance in progress');

    const { id } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const p = await preview(id);
    await confirm(id, p.body.quote_id!);
    const r = await preview(id);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('Order is refunded: only a completed order can be cancelled');
  });

  it('answers 409 to a quote that expired, belongs to another order or no longer matches', async () => {
    await h.setClock(NOW);
    const a = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const b = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const qa = (await preview(a.id)).body.quote_id!;
    const qb = (await preview(b.id)).body.quote_id!;
    const stale = 'Cancellation quote expired: preview again';

    const crossed = await confirm(a.id, qb);
    expect(crossed.status).toBe(409);
    expect(crossed.body.message).toBe(stale);
    const made = await confirm(a.id, 'cq_0000');
    expect(made.status).toBe(409);

    await h.setClock('2026-12-01T10:10:01+02:00');
    const late = await confirm(a.id, qa);
    expect(late.status).toBe(409);
    expect(late.body.message).toBe(stale);
    expect((await orderState(h, a.id)).status).toBe('completed');
    await h.setClock(NOW);
    const fresh = (await preview(a.id)).body.quote_id!;
    expect((await confirm(a.id, fresh)).status).toBe(200);
    await expectBooksClean(h);
  });
});
