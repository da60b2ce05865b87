import { orderNotFound } from '../domain/errors.ts';
import { findOrder, orderItems } from '../db/repos/orders.ts';
import type { PartnerRow } from '../db/schema.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';

/** get-order: another partner's order is reported exactly like an unknown one. */
export async function getOrder(svc: Services, partner: PartnerRow, id: string) {
  const order = await findOrder(svc.db, id);
  if (!order || order.partner_id !== partner.id) throw orderNotFound();
  const now = await svc.clock.now();
  const items = await orderItems(svc.db, id);
  return orderView(order, items, now, {
    dates: GET_ORDER_DATES(order, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}
