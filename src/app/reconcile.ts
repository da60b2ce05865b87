import type { Db } from '../db/database.ts';
import { allRefunds } from '../db/repos/refunds.ts';
import { ordersAfter, type OrderBooks } from '../db/repos/orders.ts';
import {
  allLedgerSums,
  allWallets,
  brokenRunningSums,
  orderLinkedEntries,
  type LedgerRow,
} from '../db/repos/wallets.ts';
import { booksEntry, SUB_WALLETS } from '../domain/wallet.ts';

export interface Difference {
  kind: 'wallet' | 'ledger' | 'order';
  subject: string;
  problem: string;
}

const PAID_STATES = ['paid', 'processing', 'completed', 'failed', 'refunded'] as const;

/**
 * Proves the books: every wallet equals the sum of its ledger, every balance_after is the running
 * sum, every paid order is backed by its payment (customer) or exactly one ledger debit (wallet),
 * every refund by its record and, for the wallet, exactly one matching credit. Read-only, in one
 * snapshot so that concurrent bookings cannot show up as differences.
 */
export async function reconcile(
  db: Db,
): Promise<{ checked: { wallets: number; orders: number }; differences: Difference[] }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const diffs: Difference[] = [];
      const wallets = await allWallets(trx);
      const sums = await allLedgerSums(trx);
      for (const w of wallets) {
        for (const sub of SUB_WALLETS) {
          const ledger = sums.find((s) => s.partner_id === w.partner_id && s.wallet === sub)?.total ?? 0;
          if (ledger !== w[sub]) {
            diffs.push({
              kind: 'wallet',
              subject: `${w.partner_id}/${sub}`,
              problem: `balance ${w[sub]} bani but ledger sums to ${ledger} bani`,
            });
          }
        }
      }
      for (const r of await brokenRunningSums(trx)) {
        diffs.push({
          kind: 'ledger',
          subject: `entry ${r.id} (${r.partner_id}/${r.wallet})`,
          problem: `balance_after ${r.balance_after} bani but the running sum is ${r.running} bani`,
        });
      }

      const entries = new Map<string, LedgerRow[]>();
      for (const e of await orderLinkedEntries(trx)) {
        const list = entries.get(e.order_id!) ?? [];
        list.push(e);
        entries.set(e.order_id!, list);
      }
      const refunds = new Map((await allRefunds(trx)).map((r) => [r.order_id, r]));
      let checkedOrders = 0;
      // In pages by id, within the same snapshot: the service reconciles on a timer (decision
      // 0056), and a million orders held at once would be a large share of its memory.
      for (let after: string | undefined; ;) {
        const orders = await ordersAfter(trx, after, ORDER_PAGE);
        for (const o of orders) {
          const problems = checkOrder(o, entries.get(o.id) ?? [], refunds.get(o.id));
          if ((PAID_STATES as readonly string[]).includes(o.status)) checkedOrders++;
          for (const problem of problems) diffs.push({ kind: 'order', subject: o.id, problem });
        }
        if (orders.length < ORDER_PAGE) break;
        after = orders.at(-1)!.id;
      }
      return { checked: { wallets: wallets.length, orders: checkedOrders }, differences: diffs };
    });
}

const ORDER_PAGE = 10_000;

function checkOrder(
  o: OrderBooks,
  entries: LedgerRow[],
  refund: { method: string; amount: number; fee: number } | undefined,
): string[] {
  const out: string[] = [];
  const payments = entries.filter((e) => e.kind === 'payment');
  const refundsBooked = entries.filter((e) => e.kind === 'refund');
  const other = entries.filter((e) => e.kind !== 'payment' && e.kind !== 'refund');
  if (other.length) out.push(`${other.length} ledger entries of kind credit point at this order`);
  for (const e of entries) {
    if (e.partner_id !== o.partner_id)
      out.push(`ledger entry ${e.id} belongs to ${e.partner_id}, not ${o.partner_id}`);
  }
  if (!(PAID_STATES as readonly string[]).includes(o.status)) {
    if (entries.length) out.push(`${o.status} order has ${entries.length} ledger entries`);
    if (refund) out.push(`${o.status} order has a refund record`);
    return out;
  }
  if (o.payment_method === 'customer') {
    const paid = o.payment ? o.payment.amount_bani : null;
    if (paid !== o.price) out.push(`customer payment ${paid ?? 'missing'} bani, price ${o.price} bani`);
    if (payments.length || refundsBooked.length) out.push('customer-paid order has wallet ledger entries');
  } else if (o.payment_method === 'wallet') {
    const expected = booksEntry(o.price) ? 1 : 0;
    if (payments.length !== expected) out.push(`${payments.length} wallet debits, expected ${expected}`);
    for (const p of payments) {
      if (p.amount !== -o.price) out.push(`wallet debit ${-p.amount} bani, price ${o.price} bani`);
      if (o.payment?.wallet && p.wallet !== o.payment.wallet)
        out.push(`debited ${p.wallet} but the payment records ${o.payment.wallet}`);
    }
  } else {
    out.push(`${o.status} order has no payment method`);
  }
  if (o.status === 'refunded') {
    if (!refund) out.push('refunded order has no refund record');
    // A partner's cancellation may return less than the price (decision 0087), never more.
    else if (refund.amount + refund.fee > o.price)
      out.push(`refund of ${refund.amount} bani and fee of ${refund.fee} bani, price ${o.price} bani`);
    if (o.payment_method === 'wallet') {
      const owed = refund?.amount ?? o.price;
      const expected = booksEntry(owed) ? 1 : 0;
      if (refundsBooked.length !== expected)
        out.push(`${refundsBooked.length} wallet refunds, expected ${expected}`);
      for (const r of refundsBooked) {
        if (r.amount !== owed) out.push(`wallet refund ${r.amount} bani, refund record ${owed} bani`);
        if (payments[0] && r.wallet !== payments[0].wallet)
          out.push(`refunded to ${r.wallet} but paid from ${payments[0].wallet}`);
      }
    }
  } else {
    if (refund) out.push(`${o.status} order has a refund record`);
    if (refundsBooked.length) out.push(`${o.status} order has ${refundsBooked.length} wallet refunds`);
  }
  return out;
}

export function formatDifferences(r: Awaited<ReturnType<typeof reconcile>>): string {
  const head = `checked ${plural(r.checked.wallets, 'wallet')} and ${plural(r.checked.orders, 'paid order')}: `;
  if (!r.differences.length) return `${head}no differences`;
  return [
    `${head}${r.differences.length} differences`,
    ...r.differences.map((d) => `  ${d.kind} ${d.subject}: ${d.problem}`),
  ].join('\n');
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
