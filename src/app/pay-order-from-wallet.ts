import { badRequest } from '../domain/errors.ts';
import {
  INSUFFICIENT,
  WALLET_PAYMENT,
  walletPaymentRecord,
  walletRefusal,
  type WalletRefusal,
} from '../domain/wallet.ts';
import { findWallet } from '../db/repos/wallets.ts';
import {
  readWhatDecidesAWalletPayment,
  type DraftToPay,
  type WalletPaymentTerms,
} from '../db/repos/wallet-payments.ts';
import type { OrderRow, PartnerRow } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { GET_ORDER_DATES, orderView, type OrderView } from './order-view.ts';
import { payableOrder, payableWindows } from './payability.ts';
import type { Services } from './services.ts';
import { payInPartnerBatch } from './wallet-payment-batches.ts';

/**
 * pay-order-from-balance (docs/api-reference.md; decisions 0012 and 0103): a partner pays its draft
 * from its wallet. The rule, as a partner would state it:
 *
 * 1. The first of these that applies refuses, in this order: no wallet, spending switched off,
 *    no such order of this partner, a product's payability window (the RO tariff switch), not a
 *    draft (or expired), a product the wallet may not pay; then no sub-wallet that alone covers
 *    the price (`promo` first, then `online`).
 * 2. Otherwise the order is paid: the debit, its ledger entry, the move to `paid` and the order's
 *    place in the issuance outbox, all at once.
 * 3. The answer is the order as get-order shows it.
 *
 * One statement checks all of (1) and does (2) in one round trip; only when it refuses does the
 * payment read the order and what decides, to answer the first check that refuses.
 */
export async function payOrderFromWallet(
  svc: Services,
  partner: PartnerRow,
  orderId: string,
): Promise<OrderView> {
  // A payment whose order changes between its statement and the read of its refusal is made again,
  // so that it answers what the order is now; the order changes at most a few times (paid,
  // expired), and a payment that keeps meeting changes is a fault.
  for (let attempt = 1; attempt <= ATTEMPTS_WHILE_THE_ORDER_CHANGES; attempt++) {
    const now = await svc.clock.now();
    const payment = await payInPartnerBatch(svc, termsFor(svc, partner, now), draftToPay(orderId, now));
    if (payment.outcome === 'paid') {
      svc.jobs.issuanceQueued();
      return asGetOrderShowsIt(svc, payment.order, now);
    }
    if (payment.outcome === 'insufficient') throw badRequest(INSUFFICIENT);
    const refusal = await firstRefusal(svc, partner, orderId, now);
    if (refusal) throw refusal.error;
    // No check refuses it now: the order changed after the statement (it lost a race with
    // confirm-order or another payment of it, it expired, the operator switched spending).
  }
  throw new Error(`order ${orderId} kept changing during its wallet payment`);
}

const ATTEMPTS_WHILE_THE_ORDER_CHANGES = 3;

/** What the checks besides the order's own state are judged by now, and who pays. */
function termsFor(svc: Services, partner: PartnerRow, now: number): WalletPaymentTerms {
  return {
    partnerId: partner.id,
    spendingKey: SPENDING_KEY,
    eligible: svc.catalogue.common.wallet_eligible_products,
    windows: payableWindows(svc, partner, now),
    reason: WALLET_PAYMENT.reason,
    actor: `partner:${partner.id}`,
  };
}

const draftToPay = (orderId: string, now: number): DraftToPay => ({
  orderId,
  payment: walletPaymentRecord(orderId, now),
  at: new Date(now),
});

/** The paid order exactly as get-order shows it now (a paid order's view names no products). */
const asGetOrderShowsIt = (svc: Services, order: OrderRow, now: number): OrderView =>
  orderView(order, [], now, { dates: GET_ORDER_DATES(order, now), publicBaseUrl: svc.config.publicBaseUrl });

/**
 * The first check of decision 0012 that refuses this payment now (walletRefusal), on what one round
 * trip outside any transaction reads; undefined when every check passes.
 */
async function firstRefusal(
  svc: Services,
  partner: PartnerRow,
  orderId: string,
  now: number,
): Promise<WalletRefusal | undefined> {
  const read = await readWhatDecidesAWalletPayment(svc.db, orderId, partner.id, SPENDING_KEY);
  // No such order: the wallet's existence and the switch, which come first, are read on their own.
  const [hasWallet, spending] = read
    ? [read.hasWallet, read.spending]
    : await Promise.all([findWallet(svc.db, partner.id).then((w) => !!w), balanceSpendingEnabled(svc.db)]);
  return walletRefusal({
    partnerId: partner.id,
    hasWallet,
    spendingEnabled: spending,
    order: read && payableOrder(read),
    windows: payableWindows(svc, partner, now),
    eligible: svc.catalogue.common.wallet_eligible_products,
    now,
  });
}
