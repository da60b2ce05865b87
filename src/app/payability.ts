import type { PayableOrder, PayableWindow } from '../domain/payment.ts';
import type { OrderItemRow, OrderRow, PartnerRow } from '../db/schema.ts';
import { PRODUCT_MODULES } from '../products/registry.ts';
import type { ProductModule } from '../products/types.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

/**
 * What the checks every payment shares (src/domain/payment.ts) read, for confirm-order and
 * pay-order-from-balance alike: the products' payability windows now, and the order as those
 * checks see it.
 */

/** The products' payability windows now (the RO tariff switch), by product code: those that have one. */
export function payableWindows(svc: Services, partner: PartnerRow, now: number): Map<string, PayableWindow> {
  const ctx = productContext(svc, now, partner);
  const windows = new Map<string, PayableWindow>();
  for (const m of PRODUCT_MODULES as readonly ProductModule[]) {
    const w = m.payableWindow?.(ctx, catalogueOf(svc, m));
    if (w) windows.set(m.product, w);
  }
  return windows;
}

/** An order row with its items, as the payment checks read it. */
export function payableOrder(o: {
  order: OrderRow;
  items: OrderItemRow[];
}): PayableOrder & { price: number } {
  return {
    partnerId: o.order.partner_id,
    status: o.order.status,
    createdAt: o.order.created_at.getTime(),
    expiresAt: o.order.expires_at.getTime(),
    products: o.items.map((it) => it.product),
    price: o.order.price,
  };
}
