import { badRequest, DomainError, forbidden, notPayable } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { INSUFFICIENT, NO_WALLET, SPENDING_DISABLED } from '../domain/wallet.ts';
import { findWallet, payOrderFromWallet, readOrderForWalletPayment } from '../db/repos/wallets.ts';
import type { PartnerRow } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { checkLocked, payableWindows } from './confirm-order.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';
import { KeyedGate } from './wallet-gate.ts';

/**
 * pay-order-from-balance, in one round trip when it succeeds: payOrderFromWallet checks, pays and
 * books in one statement that commits on its own (the status change, the debit, the ledger entry
 * and the order's place in the issuance outbox together or not at all), given what the checks of
 * decisions.md §5 need besides the order (the eligible products, the products' payability windows
 * now, the spending switch's key). Nothing is locked before it. When it changes nothing, a read of
 * the order and of what the checks need runs the checks in their precedence, to answer the first
 * that refuses; if none does, the order changed in between (a payment that lost a race to
 * confirm-order, a second payment, the expiry, the operator's switch), and the payment is tried
 * again, so it answers what get-order would now show. This process's payments of one partner wait
 * in the gate rather than on the wallet row, which each holds only while its statement runs and
 * commits.
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
  const release = await gate.acquire(partner.id);
  let booked;
  try {
    booked = await payOrderFromWallet(svc.db, {
      partnerId: partner.id,
      orderId: id,
      rules: {
        spendingKey: SPENDING_KEY,
        eligible: svc.catalogue.common.wallet_eligible_products,
        windows: payableWindows(svc, partner, now),
      },
      payment: { transaction_id: `wallet:${id}`, paid_at: now, currency: 'MDL' },
      reason: 'wallet payment',
      actor: `partner:${partner.id}`,
      at: new Date(now),
    });
  } finally {
    release();
  }
  // Every check before the balance passed: the balance is what refused.
  if (booked.outcome === 'insufficient') throw badRequest(INSUFFICIENT);
  if (booked.outcome === 'refused') {
    await refusal(svc, partner, id, now);
    return RETRY;
  }
  svc.jobs.issuanceQueued();
  // Rule 3: the order exactly as get-order would show it now (a paid order's view names no products).
  const paid = booked.order;
  return orderView(paid, [], now, {
    dates: GET_ORDER_DATES(paid, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}

/**
 * Throws the answer of the first check of decisions.md §5 that refuses this payment now, read in
 * one round trip outside any transaction (the order, its items, the wallet's existence, the
 * spending switch); returns when every check passes.
 */
async function refusal(svc: Services, partner: PartnerRow, id: string, now: number): Promise<void> {
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
}
