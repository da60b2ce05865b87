import { expect } from 'vitest';
import { reconcile } from '../../src/app/reconcile.ts';
import { harnessAt, rcaItem, type Creds, type Harness } from '../support/harness.ts';
import { paidOrder } from '../support/orders.ts';

/** The after-sale tests' hour: 10:00 on 1 December 2026 in Chișinău. */
export const NOW = '2026-12-01T10:00:00+02:00';

/** A test file's service with its clock at NOW (its demo partner sells the orders). */
export const harnessAtNow = (): Promise<Harness> => harnessAt(NOW);

/** A vignette:md item for a foreign car, its plate typed by the partner. */
export const mdItem = (start: string, over: Record<string, unknown> = {}) => ({
  product: 'vignette:md',
  identity_document: 'C01X00T47',
  driver_full_name: 'Hans Müller',
  country: 'DEU',
  start_date: start,
  period: '7_days',
  vehicle_category: 'M1',
  registration_number: 'B AB 1234',
  vin: 'WDD2050071F000001',
  ...over,
});

/** A completed order of `products`, paid from the wallet or by the customer; answers its id and price. */
export async function completedOrder(
  h: Harness,
  creds: Creds,
  products: Record<string, unknown>[],
  via: 'wallet' | 'customer',
): Promise<{ id: string; price: number }> {
  const { id, price } = await paidOrder(
    h,
    creds,
    products,
    via === 'wallet' ? 'pay-order-from-balance' : 'confirm-order',
    { phone: '+37369000000', name: 'Ion Popescu' },
  );
  await h.waitForStatus(id, 'completed', { creds });
  return { id, price };
}

export const rcaOrder = (
  h: Harness,
  creds: Creds,
  start: string,
  via: 'wallet' | 'customer',
  vehicle = '100000001',
) => completedOrder(h, creds, [rcaItem(start, { vehicle })], via);

export async function onlineBalance(h: Harness, creds: Creds): Promise<number> {
  const res = await h.call<{ wallets: { online: number } }>('get-balance', {}, creds);
  expect(res.status).toBe(200);
  return res.body.wallets.online;
}

export async function expectBooksClean(h: Harness): Promise<void> {
  const books = await reconcile(h.service.svc.db);
  expect(books.differences).toEqual([]);
}

/** What the partner's orders look like to the operator: status and ledger, to show nothing changed. */
export async function orderState(h: Harness, id: string) {
  const res = await h.admin<Record<string, unknown>>('GET', `/admin/orders/${id}`);
  expect(res.status).toBe(200);
  const b = res.body;
  return { status: b.status, ledger: b.ledger, refund: b.refund, history: b.history };
}
