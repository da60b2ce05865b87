import { sql, type Transaction } from 'kysely';
import { badRequest, DomainError, forbidden, notPayable } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { pickSubWallet, INSUFFICIENT, NO_WALLET, SPENDING_DISABLED } from '../domain/wallet.ts';
import { transition } from '../db/repos/orders.ts';
import { debitForOrder, findWallet, lockOrderForWalletPayment, lockWallet } from '../db/repos/wallets.ts';
import type { DB, PartnerRow, PaymentData } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { checkLocked } from './confirm-order.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import type { Services } from './services.ts';
import { KeyedGate } from './wallet-gate.ts';

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
  // A transaction opened and ended by hand on one connection: the booking carries the COMMIT in
  // its own message (see debitForOrder), which Kysely's transaction() cannot express.
  return svc.db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    let open = true;
    try {
      const view = await pay(svc, conn as Transaction<DB>, partner, id, now, () => (open = false));
      if (open) {
        await sql`commit`.execute(conn);
        open = false;
      }
      return view;
    } finally {
      if (open) await sql`rollback`.execute(conn);
    }
  });
}

const gate = new KeyedGate();

async function pay(
  svc: Services,
  trx: Transaction<DB>,
  partner: PartnerRow,
  id: string,
  now: number,
  committed: () => void,
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
  const base = {
    transaction_id: `wallet:${id}`,
    paid_at: now,
    amount_bani: order.price,
    currency: 'MDL',
  };
  if (order.price > 0) {
    // Last: the wallet row lock is held for this one statement and the commit.
    const release = await gate.acquire(partner.id);
    let booked;
    try {
      booked = await debitForOrder(trx, {
        partnerId: partner.id,
        orderId: id,
        price: order.price,
        actor,
        at,
        payment: base,
      });
    } finally {
      release();
    }
    if (booked === 'insufficient') throw badRequest(INSUFFICIENT);
    committed();
  } else {
    // Nothing to debit and no ledger entry (amounts are never zero); the order still needs the wallet row.
    const wallet = await lockWallet(trx, partner.id);
    if (!wallet) throw forbidden(NO_WALLET);
    const from = pickSubWallet(wallet, 0);
    const payment: PaymentData = { receipt_id: 'wallet:0', ...base, wallet: from };
    const moved = await transition(trx, id, 'draft', 'paid', {
      actor,
      reason: `wallet payment from ${from}`,
      at,
      set: { payment: JSON.stringify(payment), payment_method: 'wallet', paid_at: at },
    });
    if (!moved) throw new Error(`order ${id} changed under its row lock`);
  }
  // Rule 3: the order exactly as get-order would show it now.
  const paid = { ...order, status: 'paid' as const };
  return orderView(paid, items, now, {
    dates: GET_ORDER_DATES(paid, now),
    publicBaseUrl: svc.config.publicBaseUrl,
  });
}
