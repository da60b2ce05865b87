import { badRequest, notPayable, orderNotFound, productRule } from '../domain/errors.ts';
import { formatAmount, mdlToBani } from '../domain/money.ts';
import { paymentRefusal } from '../domain/payment.ts';
import { isoLocal } from '../domain/time.ts';
import { queueIssuance } from '../db/repos/issuance-outbox.ts';
import { lockOrderWithItems, transition } from '../db/repos/orders.ts';
import type { Transaction } from 'kysely';
import type { DB, OrderItemRow, OrderRow, PartnerRow, PaymentData } from '../db/schema.ts';
import { orderView } from './order-view.ts';
import { payableOrder, payableWindows } from './payability.ts';
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

export async function confirmOrder(
  svc: Services,
  partner: PartnerRow,
  id: string,
  payment: PaymentInput,
  /** Runs in the payment's transaction when this call paid the order (not on a repeat). */
  onPaid?: (trx: Transaction<DB>) => Promise<void>,
) {
  const now = await svc.clock.now();
  const view = await svc.db.transaction().execute(async (trx) => {
    // Under the order's row lock, the checks every payment shares (decision 0005), answered here
    // as confirm-order answers them.
    const locked = await lockOrderWithItems(trx, id);
    const refused = paymentRefusal({
      partnerId: partner.id,
      order: locked && payableOrder(locked),
      windows: payableWindows(svc, partner, now),
      now,
    });
    if (!locked || refused?.check === 'order') throw orderNotFound();
    if (refused?.check === 'window') throw productRule(`Order ${id}: ${refused.reason}`);
    const { order, items } = locked;
    if (refused?.check === 'status') {
      const prior = order.payment;
      if (
        order.payment_method === 'customer' &&
        prior?.transaction_id === payment.transaction_id &&
        prior.receipt_id === payment.receipt_id
      ) {
        return present(svc, order, items, now); // a terminal retrying a payment that already went through
      }
      throw notPayable(refused.status);
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
    await onPaid?.(trx);
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
