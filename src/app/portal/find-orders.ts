import { addDays, localDate } from '../../domain/time.ts';
import { listOrdersForOperator } from '../admin/orders.ts';
import { DEFAULT_RENEWAL_NOTICE_DAYS } from '../admin/partners.ts';
import { RENEWAL_MIN_DAYS } from '../renewal-notices.ts';
import type { Services } from '../services.ts';
import type { PortalUser } from './roles.ts';

/**
 * The partner's orders, newest first, cursor-paged: the operator's search and filters (an order id,
 * a plate or vehicle certificate, a customer phone; status, product, local creation days) on the
 * user's partner only. `expiring`: only the orders expiring soon, whose renewal is due: completed,
 * a policy of 90 days or more, its last day within the partner's renewal notice (30 days when it
 * has none) from today (decision 0092).
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
    expiring?: boolean;
  },
) {
  const { expiring, ...filters } = q;
  if (!expiring) return listOrdersForOperator(svc, { ...filters, partner_id: user.partnerId });
  const days = (await svc.partners.get(user.partnerId))?.renewal_notice_days || DEFAULT_RENEWAL_NOTICE_DAYS;
  const today = localDate(await svc.clock.now());
  return listOrdersForOperator(svc, {
    ...filters,
    partner_id: user.partnerId,
    ending: { from: today, to: addDays(today, days), minDays: RENEWAL_MIN_DAYS },
  });
}
