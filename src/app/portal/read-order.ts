import { notFound } from '../../domain/errors.ts';
import { findOrder } from '../../db/repos/orders.ts';
import { orderDetail } from '../admin/orders.ts';
import type { Services } from '../services.ts';
import { mayOpen, requireArea, type PortalUser } from './roles.ts';

/** The order the user's partner owns, or 404 as for an order that does not exist. */
export async function ownedOrder(svc: Services, user: PortalUser, id: string) {
  const order = await findOrder(svc.db, id);
  if (!order || order.partner_id !== user.partnerId) throw notFound('Order not found');
  return order;
}

/**
 * An order of the user's partner in full: status and history, products, payment, failure reason,
 * webhook events and every attempt. Its policies are downloaded through the portal (the session
 * decides), not by their public file URL.
 */
export async function readOrder(svc: Services, user: PortalUser, id: string) {
  requireArea(user, 'orders');
  await ownedOrder(svc, user, id);
  const detail = await orderDetail(svc, id);
  return {
    ...detail,
    products: detail.products.map((p) => ({
      ...p,
      file: p.file ? `/portal/orders/${encodeURIComponent(id)}/policy/${p.idx}` : null,
    })),
    can_resend: mayOpen(user.role, 'developers'),
    // Cancel policy and Correct (decision 0088): the roles that sell.
    can_change: mayOpen(user.role, 'sell'),
    // Sell again: a completed order's renewal, for whoever may sell (decision 0092).
    can_sell_again: detail.status === 'completed' && mayOpen(user.role, 'sell'),
  };
}
