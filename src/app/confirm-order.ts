import type { Transaction } from 'kysely';
import { badRequest, DomainError, notPayable, orderNotFound, productRule } from '../domain/errors.ts';
import { formatAmount, mdlToBani } from '../domain/money.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { isoLocal } from '../domain/time.ts';
import { queueIssuance } from '../db/repos/issuance-outbox.ts';
import { lockOrderWithItems, transition } from '../db/repos/orders.ts';
import type { DB, OrderItemRow, OrderRow, PartnerRow, PaymentData } from '../db/schema.ts';
import { PRODUCT_MODULES } from '../products/registry.ts';
import type { PayableWindow, ProductModule } from '../products/types.ts';
import { orderView } from './order-view.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

export interface PaymentInput {
  receipt_id: string;
  transaction_id: string;
  paid_at: number;
  amount: number;
  currency?: string;
  pos_id?: string;
}

const PAID_AT_SLACK_MS = 5 * 60_000;

/**
 * Loads the order for payment under a row lock and applies the checks every payment path shares,
 * in the order of decision 0005: ownership, then the products' own payability rules (the RO
 * tariff switch), before any status check.
 */
export async function lockForPayment(
  svc: Services,
  trx: Transaction<DB>,
  partner: PartnerRow,
  id: string,
  now: number,
): Promise<{ order: OrderRow; items: OrderItemRow[] }> {
  return checkLocked(svc, partner, await lockOrderWithItems(trx, id), now);
}

/** lockForPayment's checks on an order its caller has locked (with its items) by other means. */
export function checkLocked(
  svc: Services,
  partner: PartnerRow,
  locked: { order: OrderRow; items: OrderItemRow[] } | undefined,
  now: number,
): { order: OrderRow; items: OrderItemRow[] } {
  if (!locked || locked.order.partner_id !== partner.id) throw orderNotFound();
  const { order, items } = locked;
  const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
  if (status === 'draft' || status === 'expired') {
    const windows = payableWindows(svc, partner, now);
    const created = order.created_at.getTime();
    for (const item of items) {
      const w = windows.get(item.product);
      if (w && !(created >= w.from && created < w.until)) throw productRule(w.reason);
    }
  }
  return { order, items };
}

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

export async function confirmOrder(svc: Services, partner: PartnerRow, id: string, payment: PaymentInput) {
  const now = await svc.clock.now();
  const view = await svc.db.transaction().execute(async (trx) => {
    let locked;
    try {
      locked = await lockForPayment(svc, trx, partner, id, now);
    } catch (err) {
      // On confirm-order a product's payability rule is answered `[API] Order <id>: <reason>`.
      if (err instanceof DomainError && err.code === 'product_rule')
        throw productRule(`Order ${id}: ${err.reason}`);
      throw err;
    }
    const { order, items } = locked;
    const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
    if (status !== 'draft') {
      const prior = order.payment;
      if (
        order.payment_method === 'customer' &&
        prior?.transaction_id === payment.transaction_id &&
        prior.receipt_id === payment.receipt_id
      ) {
        return present(svc, order, items, now); // a terminal retrying a payment that already went through
      }
      throw notPayable(status);
    }
    const stored = validatePayment(order, payment, now);
    const at = new Date(now);
    await transition(trx, id, 'draft', 'paid', {
      actor: `partner:${partner.id}`,
      reason: 'customer payment',
      at,
      set: { payment: JSON.stringify(stored), payment_method: 'customer', paid_at: at },
    });
    await queueIssuance(trx, id, at);
    return present(svc, { ...order, status: 'paid' }, items, now);
  });
  svc.jobs.issuanceQueued();
  return view;
}

function present(svc: Services, order: OrderRow, items: OrderItemRow[], now: number) {
  return orderView(order, items, now, {
    dates: { start: true, end: true },
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}

function validatePayment(order: OrderRow, p: PaymentInput, now: number): PaymentData {
  const amount = mdlToBani(p.amount);
  if (amount === null) throw badRequest('payment.amount must be an amount in MDL with at most 2 decimals');
  if (amount !== order.price) {
    throw badRequest(
      `payment.amount ${formatAmount(amount, 'MDL')} does not match the order price ${formatAmount(order.price, 'MDL')}`,
    );
  }
  const currency = p.currency ?? 'MDL';
  if (currency !== 'MDL') throw badRequest(`payment.currency must be MDL, got ${currency}`);
  const earliest = order.created_at.getTime() - PAID_AT_SLACK_MS;
  const latest = now + PAID_AT_SLACK_MS;
  if (p.paid_at < earliest || p.paid_at > latest) {
    throw badRequest(`payment.paid_at must be between ${isoLocal(earliest)} and ${isoLocal(latest)}`);
  }
  return {
    receipt_id: p.receipt_id,
    transaction_id: p.transaction_id,
    paid_at: p.paid_at,
    amount_bani: amount,
    currency,
    ...(p.pos_id !== undefined ? { pos_id: p.pos_id } : {}),
  };
}
