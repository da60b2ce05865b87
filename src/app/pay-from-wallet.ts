import type { Logger } from 'pino';
import { badRequest } from '../domain/errors.ts';
import { INSUFFICIENT, WALLET_PAYMENT, walletPaymentRecord, walletRefusal } from '../domain/wallet.ts';
import type { Db } from '../db/database.ts';
import {
  findWallet,
  payOrderFromWallet,
  payOrdersFromWallet,
  readOrderForWalletPayment,
  type WalletPayment,
} from '../db/repos/wallets.ts';
import type { PartnerRow } from '../db/schema.ts';
import { balanceSpendingEnabled, SPENDING_KEY } from './admin/settings.ts';
import { GET_ORDER_DATES, orderView } from './order-view.ts';
import { payableOrder, payableWindows } from './payability.ts';
import type { Services } from './services.ts';
import { KeyedBatches, type Settled } from './wallet-gate.ts';

/**
 * pay-order-from-balance, in one round trip when it succeeds: payOrderFromWallet checks, pays and
 * books in one statement that commits on its own (the status change, the debit, the ledger entry
 * and the order's place in the issuance outbox together or not at all), given what the checks of
 * decision 0012 need besides the order (the eligible products, the products' payability windows
 * now, the spending switch's key). Nothing is locked before it. When it changes nothing, a read of
 * the order and of what the checks need runs the checks in their precedence, to answer the first
 * that refuses; if none does, the order changed in between (a payment that lost a race to
 * confirm-order, a second payment, the expiry, the operator's switch), and the payment is tried
 * again, so it answers what get-order would now show. This process's payments of one partner that
 * arrive while a statement of theirs runs wait here rather than on the wallet row, and go together
 * as the next statement ({@link KeyedBatches}).
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

const RETRY = Symbol('retry');

type Booking = Parameters<typeof payOrderFromWallet>[1];

/** Per Services: their database and their partners' batches. */
const batchesOf = new WeakMap<Services, KeyedBatches<Booking, WalletPayment>>();

function batches(svc: Services): KeyedBatches<Booking, WalletPayment> {
  let b = batchesOf.get(svc);
  if (!b) {
    b = new KeyedBatches((_partner, jobs) => bookWalletPayments(svc.db, jobs, svc.log));
    batchesOf.set(svc, b);
  }
  return b;
}

/**
 * A batch of one partner's payments: one statement (payOrdersFromWallet, or payOrderFromWallet for
 * a payment alone) for those judged by the same rules, which is all of them but at the instant a
 * product's payability window opens or closes. A payment refused or short of money changes nothing
 * and the others go on. If a statement of several fails, it changed nothing, and each of its
 * payments runs again alone, so that whatever failed it fails only its own; that is logged, since
 * the batch statement should not fail where the single one does not.
 */
export async function bookWalletPayments(
  db: Db,
  jobs: Booking[],
  log?: Pick<Logger, 'warn'>,
): Promise<Settled<WalletPayment>[]> {
  const results: Settled<WalletPayment>[] = [];
  // An order named again goes to a later statement of its group, which sees what the earlier one
  // did: within one statement a second job of an order is refused as though the first had paid it,
  // which is wrong when the first found the balance short.
  const groups = new Map<string, { jobs: number[]; orders: Set<string> }>();
  jobs.forEach((job, i) => {
    const key = rulesKey(job);
    let round = 0;
    while (groups.get(`${round}\n${key}`)?.orders.has(job.orderId)) round++;
    const group = groups.get(`${round}\n${key}`);
    if (group) {
      group.jobs.push(i);
      group.orders.add(job.orderId);
    } else groups.set(`${round}\n${key}`, { jobs: [i], orders: new Set([job.orderId]) });
  });
  for (const { jobs: group } of groups.values()) {
    // A payment alone takes the single statement, which costs the server less.
    if (group.length === 1) {
      results[group[0]!] = await settled(payOrderFromWallet(db, jobs[group[0]!]!));
      continue;
    }
    const paid = await settled(
      payOrdersFromWallet(db, { ...jobs[group[0]!]!, jobs: group.map((i) => jobs[i]!) }),
    );
    if (paid.ok) {
      group.forEach((i, k) => (results[i] = { ok: true, value: paid.value[k]! }));
    } else {
      log?.warn(
        { err: paid.error, partner: jobs[group[0]!]!.partnerId, payments: group.length },
        'a batch of wallet payments failed; each runs again alone',
      );
      for (const i of group) results[i] = await settled(payOrderFromWallet(db, jobs[i]!));
    }
  }
  return results;
}

/** Jobs with the same key can share a statement: the same partner's, judged by the same rules. */
const rulesKey = (job: Booking) =>
  JSON.stringify([
    job.partnerId,
    job.rules.spendingKey,
    job.rules.eligible,
    [...job.rules.windows].map(([product, w]) => [product, String(w.from), String(w.until)]),
    job.reason,
    job.actor,
  ]);

const settled = <R>(p: Promise<R>): Promise<Settled<R>> =>
  p.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

async function pay(svc: Services, partner: PartnerRow, id: string, now: number) {
  const booked = await batches(svc).submit(partner.id, {
    partnerId: partner.id,
    orderId: id,
    rules: {
      spendingKey: SPENDING_KEY,
      eligible: svc.catalogue.common.wallet_eligible_products,
      windows: payableWindows(svc, partner, now),
    },
    payment: walletPaymentRecord(id, now),
    reason: WALLET_PAYMENT.reason,
    actor: `partner:${partner.id}`,
    at: new Date(now),
  });
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
 * Throws the answer of the first check of decision 0012 that refuses this payment now
 * (walletRefusal), on what one round trip outside any transaction reads (the order, its items,
 * the wallet's existence, the spending switch); returns when every check passes.
 */
async function refusal(svc: Services, partner: PartnerRow, id: string, now: number): Promise<void> {
  const read = await readOrderForWalletPayment(svc.db, id, partner.id, SPENDING_KEY);
  const [hasWallet, spending] = read
    ? [read.hasWallet, read.spending]
    : await Promise.all([findWallet(svc.db, partner.id).then((w) => !!w), balanceSpendingEnabled(svc.db)]);
  const refused = walletRefusal({
    partnerId: partner.id,
    hasWallet,
    // As the statement reads the switch: on unless it is false.
    spendingEnabled: spending !== false,
    order: read && payableOrder(read),
    windows: payableWindows(svc, partner, now),
    eligible: svc.catalogue.common.wallet_eligible_products,
    now,
  });
  if (refused) throw refused.error;
}
