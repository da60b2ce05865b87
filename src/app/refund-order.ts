import { conflict, notFound } from '../domain/errors.ts';
import { lockOrder, transition } from '../db/repos/orders.ts';
import { findRefund, insertRefund } from '../db/repos/refunds.ts';
import { bookEntry, lockWallet, orderLedger } from '../db/repos/wallets.ts';
import { baniToMdl } from '../domain/money.ts';
import { isoLocal } from '../domain/time.ts';
import { booksEntry } from '../domain/wallet.ts';
import type { Transaction } from 'kysely';
import type { DB, OrderRow } from '../db/schema.ts';
import type { Services } from './services.ts';
import { audit, type Actor } from './actor.ts';
import { emitOrderEvent } from './webhook-events.ts';

const REFUNDABLE = ['failed', 'completed'];

/**
 * The operator's refund: `failed` or `completed` → `refunded`. A wallet-paid order gets its money
 * back on the sub-wallet that paid, in the same transaction as the status change; a customer
 * payment is recorded as a refund for the operator to settle outside the service. The order row
 * is locked first and the wallet second, as in every payment, so a refund never races a payment.
 */
export async function refundOrder(
  svc: Services,
  actor: Actor,
  id: string,
  input: { reason: string; actor: string },
) {
  const now = await svc.clock.now();
  const at = new Date(now);
  await svc.db.transaction().execute(async (trx) => {
    const order = await lockOrder(trx, id);
    if (!order) throw notFound('Order not found');
    if (order.status === 'refunded') throw conflict('Order is already refunded');
    if (!REFUNDABLE.includes(order.status)) {
      throw conflict(`Order is not refundable (status ${order.status}); only failed or completed orders are`);
    }
    if (await findRefund(trx, id)) throw conflict('Order is already refunded');
    await refundLockedOrder(svc, trx, order, {
      ...input,
      at,
      failureReason: order.failure_reason ?? `Refunded by the operator: ${input.reason}`,
    });
    await audit(trx, actor, {
      action: 'order.refund',
      target: id,
      before: { status: order.status },
      after: { status: 'refunded', reason: input.reason },
      at,
    });
  });
  return refundView(svc, id);
}

/**
 * The refund itself, on an order the caller has locked (failed or completed): a wallet payment goes
 * back to the sub-wallet that paid, as a ledger entry; a customer payment is recorded for the
 * operator to settle; the order moves to refunded. Also used by issuance, which refunds a failed
 * wallet-paid order in the transaction that records the failure.
 */
export async function refundLockedOrder(
  svc: Pick<Services, 'jobs' | 'randomBytes'>,
  trx: Transaction<DB>,
  order: OrderRow,
  input: {
    reason: string;
    actor: string;
    at: Date;
    failureReason: string;
    /** A partner's cancellation returns less than the price (decision 0087); the price otherwise. */
    refund?: { amount: number; fee: number };
  },
): Promise<void> {
  const { at } = input;
  const id = order.id;
  const amount = input.refund?.amount ?? order.price;
  let ledgerEntryId: number | null = null;
  if (order.payment_method === 'wallet' && booksEntry(amount)) {
    // The payment entry says which sub-wallet paid and how much; without it there is nothing to return.
    const paid = (await orderLedger(trx, id)).find((e) => e.kind === 'payment');
    if (!paid) throw conflict(`Order ${id} is marked wallet-paid but has no ledger payment`);
    const wallet = await lockWallet(trx, order.partner_id);
    if (!wallet) throw conflict(`Partner ${order.partner_id} has no wallet to refund to`);
    const booked = await bookEntry(trx, wallet, {
      partnerId: order.partner_id,
      wallet: paid.wallet,
      amount,
      kind: 'refund',
      orderId: id,
      reference: null,
      actor: input.actor,
      at,
    });
    ledgerEntryId = booked!.entryId;
  }
  const method = order.payment_method === 'wallet' ? 'wallet' : 'customer';
  await insertRefund(trx, {
    order_id: id,
    method,
    amount,
    fee: input.refund?.fee ?? 0,
    status: method === 'wallet' ? 'settled' : 'to_settle',
    reason: input.reason,
    actor: input.actor,
    ledger_entry_id: ledgerEntryId,
    created_at: at,
    settled_at: method === 'wallet' ? at : null,
  });
  const moved = await transition(trx, id, order.status, 'refunded', {
    actor: input.actor,
    reason: input.reason,
    at,
    set: { failure_reason: input.failureReason },
  });
  if (!moved) throw new Error(`order ${id} changed under its row lock`);
  await emitOrderEvent(svc, trx, order, 'refunded', at);
}

/** The refund as the operator sees it (also part of GET /admin/orders/:id). */
export async function refundView(svc: Services, orderId: string) {
  const r = await findRefund(svc.db, orderId);
  if (!r) return null;
  return {
    order_id: r.order_id,
    method: r.method,
    amount: baniToMdl(r.amount),
    fee: baniToMdl(r.fee),
    currency: 'MDL',
    status: r.status,
    reason: r.reason,
    actor: r.actor,
    created_at: isoLocal(r.created_at.getTime()),
    settled_at: r.settled_at ? isoLocal(r.settled_at.getTime()) : null,
  };
}
