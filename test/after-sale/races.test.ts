import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { completedOrder, expectBooksClean, mdItem, onlineBalance, rcaOrder } from './support.ts';

/**
 * Races on the real database (the embedded server, or DATABASE_URL's): many confirmations of one
 * order at once, through the partner API and the operator's refund. Exactly one changes the order;
 * the ledger holds at most one refund per order; the books reconcile.
 */
let h: Harness;
const NOW = '2026-12-01T10:00:00+02:00';
const ATTEMPTS = 12;

beforeAll(async () => {
  h = await startHarness();
  await h.setClock(NOW);
});
afterAll(() => h?.close());

async function refundEntries(id: string): Promise<number> {
  const res = await h.admin<{ ledger: { kind: string }[] }>('GET', `/admin/orders/${id}`);
  return res.body.ledger.filter((e) => e.kind === 'refund').length;
}

const previewCancel = async (id: string) =>
  (await h.call<{ quote_id: string }>('cancel-order', { id })).body.quote_id;

describe('concurrent after-sale changes of one order', () => {
  it('many confirmations of one quote: one refund, every answer the refunded order', async () => {
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const before = await onlineBalance(h, h.demo);
    const quote = await previewCancel(id);
    const answers = await Promise.all(
      Array.from({ length: ATTEMPTS }, () => h.call('cancel-order', { id, quote_id: quote })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(ATTEMPTS).fill(200));
    for (const a of answers) expect(a.body).toMatchObject({ status: 'refunded' });
    expect(await refundEntries(id)).toBe(1);
    expect(await onlineBalance(h, h.demo)).toBeCloseTo(before + price, 2);
    await expectBooksClean(h);
  });

  it('many confirmations of as many quotes: exactly one wins, the others are told to preview again', async () => {
    const { id } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const quotes = await Promise.all(Array.from({ length: ATTEMPTS }, () => previewCancel(id)));
    const answers = await Promise.all(quotes.map((q) => h.call('cancel-order', { id, quote_id: q })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(ATTEMPTS - 1).fill(409)]);
    expect(await refundEntries(id)).toBe(1);
    await expectBooksClean(h);
  });

  it('a cancellation racing a correction of each of several orders: one of the two wins each', async () => {
    const orders = await Promise.all(
      Array.from({ length: 6 }, () => completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet')),
    );
    const outcomes = await Promise.all(
      orders.map(async ({ id }) => {
        const changes = { plate_number: 'B RC 1234' };
        const [cq, xq] = await Promise.all([
          previewCancel(id),
          h.call<{ quote_id: string }>('correct-order', { id, changes }).then((r) => r.body.quote_id),
        ]);
        const [cancel, correct] = await Promise.all([
          h.call('cancel-order', { id, quote_id: cq }),
          h.call('correct-order', { id, changes, quote_id: xq }),
        ]);
        return { id, cancel: cancel.status, correct: correct.status };
      }),
    );
    for (const o of outcomes) {
      expect([o.cancel, o.correct].sort(), JSON.stringify(o)).toEqual([200, 409]);
      const order = await h.call<{ status: string }>('get-order', { id: o.id });
      expect(order.body.status).toBe(o.cancel === 200 ? 'refunded' : 'completed');
      expect(await refundEntries(o.id)).toBe(o.cancel === 200 ? 1 : 0);
    }
    await expectBooksClean(h);
  });

  it('a cancellation racing the operator’s refund of each of several orders: one of the two wins each', async () => {
    const orders = await Promise.all(
      Array.from({ length: 6 }, () => rcaOrder(h, h.demo, '2026-12-05', 'wallet')),
    );
    const outcomes = await Promise.all(
      orders.map(async ({ id }) => {
        const quote = await previewCancel(id);
        const [cancel, refund] = await Promise.all([
          h.call('cancel-order', { id, quote_id: quote }),
          h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'customer called' }),
        ]);
        return { id, cancel: cancel.status, refund: refund.status };
      }),
    );
    for (const o of outcomes) {
      expect([o.cancel, o.refund].sort(), JSON.stringify(o)).toEqual([200, 409]);
      expect(await refundEntries(o.id)).toBe(1);
    }
    await expectBooksClean(h);
  });
});
