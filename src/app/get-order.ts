import { orderNotFound } from '../domain/errors.ts';
import { findOrderWithItems } from '../db/repos/orders.ts';
import { findRefund } from '../db/repos/refunds.ts';
import { baniToMdl } from '../domain/money.ts';
import { isoLocal } from '../domain/time.ts';
import type { PartnerRow } from '../db/schema.ts';
import { GET_ORDER_DATES, orderView, type RefundView } from './order-view.ts';
import type { Services } from './services.ts';

/**
 * The partner's own order and its items, in one round trip: another partner's order is reported
 * exactly like an unknown one.
 */
export async function partnerOrder(svc: Pick<Services, 'db'>, partner: PartnerRow, id: string) {
  const found = await findOrderWithItems(svc.db, id);
  if (!found || found.order.partner_id !== partner.id) throw orderNotFound();
  return found;
}

/** get-order: the partner's own order as it is now, with its refund once refunded. */
export async function getOrder(svc: Services, partner: PartnerRow, id: string) {
  const { order, items } = await partnerOrder(svc, partner, id);
  const now = await svc.clock.now();
  const view = orderView(order, items, now, {
    dates: GET_ORDER_DATES(order, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
  // A refunded order, however it came to be refunded, says what went back (decision 0088): one
  // more read, only for these.
  if (view.status === 'refunded') {
    const refund = await refundOf(svc, order.id);
    if (refund) view.refund = refund;
  }
  return view;
}

/** The refund of an order as the partner sees it: what went back, what was withheld, to whom, when. */
export async function refundOf(svc: Pick<Services, 'db'>, orderId: string): Promise<RefundView | undefined> {
  const r = await findRefund(svc.db, orderId);
  if (!r) return undefined;
  return {
    amount: baniToMdl(r.amount),
    fee: baniToMdl(r.fee),
    currency: 'MDL',
    to: r.method === 'wallet' ? 'wallet' : 'customer',
    at: isoLocal(r.created_at.getTime()),
  };
}
