import { orderNotFound } from '../domain/errors.ts';
import { findOrderWithItems } from '../db/repos/orders.ts';
import type { PartnerRow } from '../db/schema.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';

/** get-order: another partner's order is reported exactly like an unknown one. */
export async function getOrder(svc: Services, partner: PartnerRow, id: string) {
  // The order and its items in one round trip.
  const found = await findOrderWithItems(svc.db, id);
  if (!found || found.order.partner_id !== partner.id) throw orderNotFound();
  const { order, items } = found;
  const now = await svc.clock.now();
  return orderView(order, items, now, {
    dates: GET_ORDER_DATES(order, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}
