import { listOrdersForOperator } from '../admin/orders.ts';
import type { Services } from '../services.ts';
import { requireArea, type PortalUser } from './roles.ts';

/**
 * The partner's orders, newest first, cursor-paged: the operator's search and filters (an order id,
 * a plate or vehicle certificate, a customer phone; status, product, local creation days) on the
 * user's partner only.
 */
export async function findOrders(
  svc: Services,
  user: PortalUser,
  q: {
    q?: string;
    status?: string;
    product?: string;
    from?: string;
    to?: string;
    cursor?: string;
    limit?: number;
  },
) {
  requireArea(user, 'orders');
  return listOrdersForOperator(svc, { ...q, partner_id: user.partnerId });
}
