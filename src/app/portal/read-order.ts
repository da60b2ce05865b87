import { notFound } from '../../domain/errors.ts';
import { findOrder } from '../../db/repos/orders.ts';
import { orderDetail } from '../admin/orders.ts';
import type { Services } from '../services.ts';
import type { PortalUser } from './roles.ts';

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
export async function readOrder(
  svc: Services,
  user: PortalUser,
  id: string,
  rights: { developers: boolean; sell: boolean },
) {
  await ownedOrder(svc, user, id);
  const detail = await orderDetail(svc, id);
  // The webhook URL is the developers' (decision 0086): cashiers and accountants see the attempts
  // without it, nor its host in an error.
  const showsUrl = rights.developers;
  return {
    ...detail,
    webhook_attempts: showsUrl
      ? detail.webhook_attempts
      : detail.webhook_attempts.map((a) => ({ ...a, url: null, error: withoutUrl(a.error, a.url) })),
    shows_webhook_url: showsUrl,
    products: detail.products.map((p) => ({
      ...p,
      file: p.file ? `/portal/orders/${encodeURIComponent(id)}/policy/${p.idx}` : null,
    })),
    can_resend: rights.developers,
    // Cancel policy and Correct (decision 0088): the roles that sell.
    can_change: rights.sell,
    // Sell again: a completed order's renewal, for whoever may sell (decision 0092).
    can_sell_again: detail.status === 'completed' && rights.sell,
  };
}

/** `error` with the URL, and its host, replaced: an error often names where it failed to connect. */
function withoutUrl(error: string | null, url: string | null): string | null {
  if (!error || !url) return error;
  let host: string | undefined;
  try {
    host = new URL(url).hostname;
  } catch {
    host = undefined;
  }
  let out = error.replaceAll(url, 'the webhook URL');
  if (host) out = out.replaceAll(host, 'the webhook host');
  return out;
}
