import type { Transaction } from 'kysely';
import { badRequest, DomainError, forbidden, notPayable } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { INSUFFICIENT, NO_WALLET, SPENDING_DISABLED } from '../domain/wallet.ts';
import { findWallet, lockOrderForWalletPayment, payOrderFromWallet } from '../db/repos/wallets.ts';
import type { DB, PartnerRow } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { checkLocked } from './confirm-order.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';
import { KeyedGate } from './wallet-gate.ts';

/**
 * pay-order-from-balance. Checks run in the precedence of decisions.md §5; locks are taken order
 * first, wallet second (as everywhere), so a concurrent confirm-order, a second payment or another
 * order of the same partner queue behind them and read the committed state. The status change,
 * the debit, the ledger entry and the issuance job commit together or not at all.
 *
 * A controlled transaction: every payment of a partner queues on its wallet row, so the row is
 * locked by the last statement (the booking) and released by the commit that follows it at once,
 * while this process's other payments of the partner wait in the gate rather than on the row.
 */
export async function payFromWallet(svc: Services, partner: PartnerRow, id: string) {
  const now = await svc.clock.now();
  const trx = await svc.db.startTransaction().execute();
  let release: (() => void) | undefined;
  try {
    const view = await pay(
      svc,
      trx,
      partner,
      id,
      now,
      async () => (release = await gate.acquire(partner.id)),
    );
    await trx.commit().execute();
    return view;
  } catch (err) {
    await trx.rollback().execute();
    throw err;
  } finally {
    release?.();
  }
}

const gate = new KeyedGate();

async function pay(
  svc: Services,
  trx: Transaction<DB>,
  partner: PartnerRow,
  id: string,
  now: number,
  enterGate: () => Promise<unknown>,
) {
  // The order row lock, its items, the wallet's existence and the spending switch in one round trip.
  const first = await lockOrderForWalletPayment(trx, id, partner.id, SPENDING_KEY);
  const hasWallet = first ? first.hasWallet : !!(await findWallet(trx, partner.id));
  if (!hasWallet) throw forbidden(NO_WALLET);
  const spending = first ? (first.spending ?? true) : await balanceSpendingEnabled(trx);
  if (!spending) throw forbidden(SPENDING_DISABLED);
  let locked;
  try {
    locked = checkLocked(svc, partner, first, now);
  } catch (err) {
    // Here a product's payability rule (the RO tariff switch) is a plain 400 with the bare reason.
    if (err instanceof DomainError && err.code === 'product_rule') throw badRequest(err.reason);
    throw err;
  }
  const { order, items } = locked;
  const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
  if (status !== 'draft') throw notPayable(status);
  const eligible = svc.catalogue.common.wallet_eligible_products;
  if (!items.every((it) => eligible.includes(it.product))) {
    throw badRequest('Balance cannot be applied to this order');
  }
  // In the same transaction, so it rolls back with anything below; done before the wallet lock.
  await svc.jobs.enqueue(trx, 'issue-order', { orderId: id }, { singletonKey: `issue:${id}` });
  const at = new Date(now);
  const actor = `partner:${partner.id}`;
  // Last: the wallet row is locked by this statement and released by the commit right after it.
  // The statement also moves the order to paid (its receipt and sub-wallet chosen by the booking).
  await enterGate();
  const booked = await payOrderFromWallet(trx, {
    partnerId: partner.id,
    orderId: id,
    price: order.price,
    payment: { transaction_id: `wallet:${id}`, paid_at: now, amount_bani: order.price, currency: 'MDL' },
    reason: 'wallet payment',
    actor,
    at,
  });
  if (!booked) throw badRequest(INSUFFICIENT);
  if (!booked.moved) throw new Error(`order ${id} changed under its row lock`);
  // Rule 3: the order exactly as get-order would show it now.
  const paid = { ...order, status: 'paid' as const };
  return orderView(paid, items, now, {
    dates: GET_ORDER_DATES(paid, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}
