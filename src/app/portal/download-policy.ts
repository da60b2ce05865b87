import { notFound } from '../../domain/errors.ts';
import { findDocument, orderItems } from '../../db/repos/orders.ts';
import type { Services } from '../services.ts';
import { ownedOrder } from './read-order.ts';
import type { PortalUser } from './roles.ts';

/**
 * A policy PDF of an order of the user's partner, again. A refunded order's policy is cancelled: it
 * is not handed out as if it still insured anyone.
 */
export async function downloadPolicy(
  svc: Services,
  user: PortalUser,
  id: string,
  idx: number,
): Promise<{ pdf: Uint8Array; fileName: string } | { cancelled: true }> {
  const order = await ownedOrder(svc, user, id);
  const item = (await orderItems(svc.db, order.id)).find((i) => i.idx === idx);
  if (!item?.file_token) throw notFound('This order has no policy at that position');
  if (order.status === 'refunded') return { cancelled: true };
  const pdf = await findDocument(svc.db, item.file_token);
  if (!pdf) throw notFound('This order has no policy at that position');
  return { pdf, fileName: `${order.id}-${idx + 1}.pdf` };
}
