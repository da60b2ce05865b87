import { effectiveStatus, type OrderStatus } from './order-state.ts';

/**
 * The checks every payment of an order makes, confirm-order's and the wallet's, in their order
 * (decisions 0005 and 0012): the order is the partner's, then each product's payability window
 * (the RO tariff switch, decision 0010), then the status. Each use case answers a refusal in its
 * own words; the wallet adds its own checks around these (src/domain/wallet.ts).
 */

/** What the checks read of an order. Instants in epoch ms. */
export interface PayableOrder {
  partnerId: string;
  status: OrderStatus;
  createdAt: number;
  expiresAt: number;
  /** Each item's product code, in the items' order. */
  products: readonly string[];
}

/** Orders created at or after `from` and before `until` (±Infinity for open ends) can be paid now. */
export interface PayableWindow {
  from: number;
  until: number;
  /** Why an order created outside it cannot (a product rule's text). */
  reason: string;
}

export interface PaymentFacts {
  /** Who pays. */
  partnerId: string;
  /** The order named, or undefined when no order has that id. */
  order: PayableOrder | undefined;
  /** Per product that has one, its payability window now. */
  windows: ReadonlyMap<string, PayableWindow>;
  now: number;
}

export type PaymentRefusal =
  /** No such order, or another partner's: the same answer, so ids of others are not revealed. */
  | { check: 'order' }
  /** A product's window does not hold the order's creation time. */
  | { check: 'window'; reason: string }
  /** Not a draft, or a draft past its expiry instant (then `expired`). */
  | { check: 'status'; status: OrderStatus };

export type PaymentCheck = PaymentRefusal['check'];

export const inWindow = (createdAt: number, w: Pick<PayableWindow, 'from' | 'until'>): boolean =>
  createdAt >= w.from && createdAt < w.until;

/** The first of the shared checks that refuses this payment now; undefined when none does. */
export function paymentRefusal(f: PaymentFacts): PaymentRefusal | undefined {
  const { order } = f;
  if (!order || order.partnerId !== f.partnerId) return { check: 'order' };
  const status = effectiveStatus(order.status, order.expiresAt, f.now);
  // The window binds an expired draft too, so that its answer does not change at midnight.
  if (status === 'draft' || status === 'expired') {
    for (const product of order.products) {
      const w = f.windows.get(product);
      if (w && !inWindow(order.createdAt, w)) return { check: 'window', reason: w.reason };
    }
  }
  if (status !== 'draft') return { check: 'status', status };
  return undefined;
}
