import { badRequest, DomainError, forbidden, notPayable } from '../domain/errors.ts';
import { baniToMdl } from '../domain/money.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { pickSubWallet, NO_WALLET, SPENDING_DISABLED } from '../domain/wallet.ts';
import { transition } from '../db/repos/orders.ts';
import { bookEntry, findWallet, lockWallet } from '../db/repos/wallets.ts';
import type { PartnerRow, PaymentData } from '../db/schema.ts';
import { balanceSpendingEnabled } from './admin/settings.ts';
import { lockForPayment } from './confirm-order.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';

/**
 * pay-order-from-balance. Checks run in the precedence of decisions.md §5; locks are taken order
 * first, wallet second (as everywhere), so a concurrent confirm-order, a second payment or another
 * order of the same partner queue behind them and read the committed state. The debit, the ledger
 * entry, the status change and the issuance job commit together or not at all. The wallet is
 * locked last and held for as few round trips as the booking needs: every payment of a partner
 * queues on that row, so its hold time is the partner's payment rate.
 */
export async function payFromWallet(svc: Services, partner: PartnerRow, id: string) {
  const now = await svc.clock.now();
  return svc.db.transaction().execute(async (trx) => {
    if (!(await findWallet(trx, partner.id))) throw forbidden(NO_WALLET);
    if (!(await balanceSpendingEnabled(trx))) throw forbidden(SPENDING_DISABLED);
    let locked;
    try {
      locked = await lockForPayment(svc, trx, partner, id, now);
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
    const wallet = await lockWallet(trx, partner.id);
    if (!wallet) throw forbidden(NO_WALLET);
    const from = pickSubWallet(wallet, order.price);
    const at = new Date(now);
    let entryId: number | null = null;
    if (order.price > 0) {
      const booked = await bookEntry(trx, wallet, {
        partnerId: partner.id,
        wallet: from,
        amount: -order.price,
        kind: 'payment',
        orderId: id,
        reference: null,
        actor: `partner:${partner.id}`,
        at,
      });
      // A payment has no reference, so the credit-idempotency conflict cannot skip it.
      if (!booked) throw new Error(`payment of order ${id} was not booked`);
      entryId = booked.entryId;
    }
    const payment: PaymentData = {
      receipt_id: `wallet:${entryId ?? 0}`,
      transaction_id: `wallet:${id}`,
      paid_at: now,
      amount: baniToMdl(order.price),
      currency: 'MDL',
      wallet: from,
    };
    const moved = await transition(trx, id, 'draft', 'paid', {
      actor: `partner:${partner.id}`,
      reason: `wallet payment from ${from}`,
      at,
      set: { payment: JSON.stringify(payment), payment_method: 'wallet', paid_at: at },
    });
    // The order row is locked and was read as a draft: a miss here is a bug, and rolls everything back.
    if (!moved) throw new Error(`order ${id} changed under its row lock`);
    // Rule 3: the order exactly as get-order would show it now.
    const paid = { ...order, status: 'paid' as const };
    return orderView(paid, items, now, {
      dates: GET_ORDER_DATES(paid, now),
      publicBaseUrl: svc.config.publicBaseUrl,
    });
  });
}
