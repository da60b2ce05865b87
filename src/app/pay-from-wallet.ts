import { badRequest, DomainError, forbidden, notPayable } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { INSUFFICIENT, NO_WALLET, SPENDING_DISABLED } from '../domain/wallet.ts';
import { findWallet, payOrderFromWallet, readOrderForWalletPayment } from '../db/repos/wallets.ts';
import type { PartnerRow } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { checkLocked } from './confirm-order.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';
import { KeyedGate } from './wallet-gate.ts';

/**
 * pay-order-from-balance, in two round trips: a read of the order and of what the checks need,
 * the checks in the precedence of decisions.md §5, then the payment as one statement that commits
 * on its own (payOrderFromWallet): the status change, the debit, the ledger entry and the order's
 * place in the issuance outbox together or not at all. Nothing is locked between the two: the
 * statement changes nothing unless the order is still the unexpired draft the checks passed, and
 * then the read and the checks run again, so a payment that lost a race to confirm-order, a second
 * payment or the expiry answers what get-order would now show. This process's payments of one
 * partner wait in the gate rather than on the wallet row, which each holds only while its statement
 * runs and commits.
 */
export async function payFromWallet(svc: Services, partner: PartnerRow, id: string) {
  // The second pass answers the order's new state; a third is not needed unless it changes again.
  for (let pass = 0; ; pass++) {
    const now = await svc.clock.now();
    const attempt = await pay(svc, partner, id, now);
    if (attempt !== RETRY) return attempt;
    if (pass === 2) throw new Error(`order ${id} kept changing during its wallet payment`);
  }
}

const gate = new KeyedGate();
const RETRY = Symbol('retry');

async function pay(svc: Services, partner: PartnerRow, id: string, now: number) {
  // The order, its items, the wallet's existence and the spending switch in one round trip.
  const first = await readOrderForWalletPayment(svc.db, id, partner.id, SPENDING_KEY);
  const hasWallet = first ? first.hasWallet : !!(await findWallet(svc.db, partner.id));
  if (!hasWallet) throw forbidden(NO_WALLET);
  const spending = first ? (first.spending ?? true) : await balanceSpendingEnabled(svc.db);
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
  const release = await gate.acquire(partner.id);
  let booked;
  try {
    booked = await payOrderFromWallet(svc.db, {
      partnerId: partner.id,
      orderId: id,
      price: order.price,
      payment: { transaction_id: `wallet:${id}`, paid_at: now, amount_bani: order.price, currency: 'MDL' },
      reason: 'wallet payment',
      actor: `partner:${partner.id}`,
      at: new Date(now),
    });
  } finally {
    release();
  }
  if (booked.outcome === 'not_draft') return RETRY;
  if (booked.outcome === 'insufficient') throw badRequest(INSUFFICIENT);
  svc.jobs.issuanceQueued();
  // Rule 3: the order exactly as get-order would show it now.
  const paid = { ...order, status: 'paid' as const };
  return orderView(paid, items, now, {
    dates: GET_ORDER_DATES(paid, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}
