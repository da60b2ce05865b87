import { badRequest, notFound } from '../domain/errors.ts';
import { baniToMdl } from '../domain/money.ts';
import { addDays, isoLocal, isValidDate, localInstant } from '../domain/time.ts';
import { findWallet, ledgerBetween, ledgerSums } from '../db/repos/wallets.ts';
import { customerRefundsBetween } from '../db/repos/refunds.ts';
import { SUB_WALLETS, type SubWallet } from '../domain/wallet.ts';
import type { Services } from './services.ts';

const MAX_DAYS = 366 * 5;

export interface StatementLine {
  id: number;
  at: string;
  wallet: SubWallet;
  kind: string;
  amount: number;
  balance_after: number;
  order_id: string | null;
  reference: string | null;
  actor: string;
}

/** A refund of a customer-paid order: owed to the customer by the partner; nothing moved in the wallet. */
export interface CustomerRefundLine {
  at: string;
  order_id: string;
  amount: number;
  fee: number;
  actor: string;
}

export interface Statement {
  partner_id: string;
  from: string;
  to: string;
  currency: 'MDL';
  opening: Record<SubWallet, number>;
  closing: Record<SubWallet, number>;
  entries: StatementLine[];
  /** Refunds due to customers in the period (decision 0087): beside the ledger, not in its balances. */
  customer_refunds: CustomerRefundLine[];
}

/**
 * A partner's wallet statement for local calendar days `from`..`to` inclusive (Europe/Chisinau):
 * opening balances, every entry with the running balance of its sub-wallet, closing balances.
 * Balances come from the ledger itself, so the statement also proves the ledger adds up.
 */
export async function walletStatement(
  svc: Services,
  input: { partnerId: string; from: string; to: string },
): Promise<Statement> {
  const { partnerId, from, to } = input;
  if (!isValidDate(from) || !isValidDate(to)) throw badRequest('from and to must be dates yyyy-mm-dd');
  if (from > to) throw badRequest('from must not be after to');
  if (addDays(from, MAX_DAYS) < to) throw badRequest(`A statement covers at most ${MAX_DAYS} days`);
  if (!(await findWallet(svc.db, partnerId))) throw notFound(`Partner ${partnerId} has no wallet`);
  const start = new Date(localInstant(from, '00:00:00'));
  const end = new Date(localInstant(addDays(to, 1), '00:00:00'));
  // One snapshot, so entries booked meanwhile cannot make opening + lines differ from closing.
  return svc.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const opening = await ledgerSums(trx, partnerId, start);
      const rows = await ledgerBetween(trx, partnerId, start, end);
      const running = { ...opening };
      const entries = rows.map((r) => {
        running[r.wallet] += r.amount;
        return {
          id: r.id,
          at: isoLocal(r.created_at.getTime()),
          wallet: r.wallet,
          kind: r.kind,
          amount: baniToMdl(r.amount),
          balance_after: baniToMdl(running[r.wallet]),
          order_id: r.order_id,
          reference: r.reference,
          actor: r.actor,
        };
      });
      const customerRefunds = (await customerRefundsBetween(trx, partnerId, start, end)).map((r) => ({
        at: isoLocal(r.created_at.getTime()),
        order_id: r.order_id,
        amount: baniToMdl(r.amount),
        fee: baniToMdl(r.fee),
        actor: r.actor,
      }));
      const mdl = (b: Record<SubWallet, number>) =>
        Object.fromEntries(SUB_WALLETS.map((w) => [w, baniToMdl(b[w])])) as Record<SubWallet, number>;
      return {
        partner_id: partnerId,
        from,
        to,
        currency: 'MDL' as const,
        opening: mdl(opening),
        closing: mdl(running),
        entries,
        customer_refunds: customerRefunds,
      };
    });
}

/** One CSV field: quoted when it holds a quote, a comma or a line break. */
export const csvCell = (v: string | number | null) => {
  const s = v === null ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * The same statement as CSV: opening rows, one row per entry, a row per refund due to a customer
 * (wallet `customer`, kind `refund_due_to_customer`, no balance: it moves nothing in the wallet),
 * closing rows.
 */
export function statementCsv(s: Statement): string {
  const head = ['date', 'wallet', 'kind', 'amount', 'balance', 'order_id', 'reference', 'actor', 'entry_id'];
  const lines = [head.join(',')];
  for (const w of SUB_WALLETS) lines.push([s.from, w, 'opening', '', s.opening[w], '', '', '', ''].join(','));
  for (const e of s.entries) {
    lines.push(
      [e.at, e.wallet, e.kind, e.amount, e.balance_after, e.order_id, e.reference, e.actor, e.id]
        .map(csvCell)
        .join(','),
    );
  }
  for (const r of s.customer_refunds) {
    lines.push(
      [r.at, 'customer', 'refund_due_to_customer', r.amount, '', r.order_id, '', r.actor, '']
        .map(csvCell)
        .join(','),
    );
  }
  for (const w of SUB_WALLETS) lines.push([s.to, w, 'closing', '', s.closing[w], '', '', '', ''].join(','));
  return `${lines.join('\r\n')}\r\n`;
}
