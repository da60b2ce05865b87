import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, LedgerEntriesTable, SubWallet, WalletRow } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;

export async function findWallet(db: Conn, partnerId: string): Promise<WalletRow | undefined> {
  return db.selectFrom('wallets').selectAll().where('partner_id', '=', partnerId).executeTakeFirst();
}

/** The wallet row locked until the transaction ends: every balance change goes through here. */
export async function lockWallet(trx: Transaction<DB>, partnerId: string): Promise<WalletRow | undefined> {
  return trx
    .selectFrom('wallets')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .forUpdate()
    .executeTakeFirst();
}

export async function createWallet(trx: Transaction<DB>, partnerId: string, at: Date): Promise<void> {
  await trx
    .insertInto('wallets')
    .values({ partner_id: partnerId, updated_at: at })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export interface LedgerLine {
  partnerId: string;
  wallet: SubWallet;
  amount: number;
  kind: 'credit' | 'payment' | 'refund';
  orderId: string | null;
  reference: string | null;
  actor: string;
  at: Date;
}

/**
 * Appends a ledger entry and moves the sub-wallet balance by the same amount, in the caller's
 * transaction, on a wallet row the caller has locked. Returns false (and changes nothing) when a
 * credit with this reference was already booked.
 */
export async function book(
  trx: Transaction<DB>,
  wallet: WalletRow,
  line: LedgerLine,
): Promise<WalletRow | null> {
  return (await bookEntry(trx, wallet, line))?.wallet ?? null;
}

/** book, answering the ledger entry's id as well (a payment's receipt names it). */
export async function bookEntry(
  trx: Transaction<DB>,
  wallet: WalletRow,
  line: LedgerLine,
): Promise<{ wallet: WalletRow; entryId: number } | null> {
  const balanceAfter = wallet[line.wallet] + line.amount;
  if (balanceAfter < 0) throw new Error(`ledger entry would take ${line.wallet} below zero`);
  const inserted = await trx
    .insertInto('ledger_entries')
    .values({
      partner_id: line.partnerId,
      wallet: line.wallet,
      amount: line.amount,
      balance_after: balanceAfter,
      kind: line.kind,
      order_id: line.orderId,
      reference: line.reference,
      actor: line.actor,
      created_at: line.at,
    })
    .onConflict((oc) => oc.columns(['partner_id', 'reference']).where('kind', '=', 'credit').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return null;
  const updated = await trx
    .updateTable('wallets')
    .set({ [line.wallet]: balanceAfter, updated_at: line.at })
    .where('partner_id', '=', line.partnerId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { wallet: updated, entryId: inserted.id };
}

export type LedgerRow = Selectable<LedgerEntriesTable>;

/** The ledger entries that moved money for an order (its payment and any refund), oldest first. */
export async function orderLedger(db: Conn, orderId: string): Promise<LedgerRow[]> {
  return db.selectFrom('ledger_entries').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
}

/** A partner's entries with created_at in [from, to), in booking order. */
export async function ledgerBetween(db: Conn, partnerId: string, from: Date, to: Date): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('id')
    .execute();
}

/** Per sub-wallet, the sum of a partner's entries booked before `before` (all of them without it). */
export async function ledgerSums(
  db: Conn,
  partnerId: string,
  before?: Date,
): Promise<Record<SubWallet, number>> {
  let q = db
    .selectFrom('ledger_entries')
    .select((eb) => ['wallet', eb.fn.sum<string | number>('amount').as('total')])
    .where('partner_id', '=', partnerId);
  if (before) q = q.where('created_at', '<', before);
  const rows = await q.groupBy('wallet').execute();
  const sums: Record<SubWallet, number> = { online: 0, insurance: 0, promo: 0 };
  for (const r of rows) sums[r.wallet] = Number(r.total);
  return sums;
}

export async function allWallets(db: Conn): Promise<WalletRow[]> {
  return db.selectFrom('wallets').selectAll().orderBy('partner_id').execute();
}

/** Per partner and sub-wallet, the sum of every ledger entry. */
export async function allLedgerSums(
  db: Conn,
): Promise<{ partner_id: string; wallet: SubWallet; total: number; n: number }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select((eb) => [
      'partner_id',
      'wallet',
      eb.fn.sum<string | number>('amount').as('total'),
      eb.fn.countAll<number>().as('n'),
    ])
    .groupBy(['partner_id', 'wallet'])
    .execute();
  return rows.map((r) => ({ ...r, total: Number(r.total), n: Number(r.n) }));
}

/** Every entry tied to an order, for reconciliation. */
export async function orderLinkedEntries(db: Conn): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('order_id', 'is not', null)
    .orderBy('id')
    .execute();
}
