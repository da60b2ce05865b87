import { sql, type Selectable, type Transaction } from 'kysely';
import type { DB, LedgerEntriesTable, SubWallet, WalletRow, Db } from '../schema.ts';

export async function findWallet(db: Db, partnerId: string): Promise<WalletRow | undefined> {
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
    .onConflict((oc) =>
      oc
        .columns(['partner_id', 'reference'])
        .where(sql<boolean>`kind = 'credit'`)
        .doNothing(),
    )
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

/** Whether a credit with this reference is already in the partner's ledger. */
export async function creditBooked(
  trx: Transaction<DB>,
  partnerId: string,
  reference: string,
): Promise<boolean> {
  const row = await trx
    .selectFrom('ledger_entries')
    .select('id')
    .where('partner_id', '=', partnerId)
    .where('reference', '=', reference)
    .where('kind', '=', 'credit')
    .executeTakeFirst();
  return row !== undefined;
}

export type LedgerRow = Selectable<LedgerEntriesTable>;

/**
 * Ledger entries whose balance_after is not the running sum of their sub-wallet's entries up to
 * them (or whose running sum is negative): for reconciliation.
 */
export async function brokenRunningSums(db: Db) {
  const { rows } = await sql<{
    id: number;
    partner_id: string;
    wallet: string;
    balance_after: number;
    running: string | number;
  }>`
    select id, partner_id, wallet, balance_after, running from (
      select id, partner_id, wallet, balance_after,
             sum(amount) over (partition by partner_id, wallet order by id) as running
      from ledger_entries) t
    where running <> balance_after or running < 0
    order by id`.execute(db);
  return rows.map((r) => ({ ...r, running: Number(r.running) }));
}

/** The ledger entries that moved money for an order (its payment and any refund), oldest first. */
export async function orderLedger(db: Db, orderId: string): Promise<LedgerRow[]> {
  return db.selectFrom('ledger_entries').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
}

/** A partner's entries, newest first, a page at a time (keyset on id). */
export async function ledgerPage(
  db: Db,
  partnerId: string,
  f: { limit: number; beforeId?: number },
): Promise<LedgerRow[]> {
  let q = db.selectFrom('ledger_entries').selectAll().where('partner_id', '=', partnerId);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}

/** A partner's entries with created_at in [from, to), in booking order. */
export async function ledgerBetween(db: Db, partnerId: string, from: Date, to: Date): Promise<LedgerRow[]> {
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
  db: Db,
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

export async function allWallets(db: Db): Promise<WalletRow[]> {
  return db.selectFrom('wallets').selectAll().orderBy('partner_id').execute();
}

/** Per partner and sub-wallet, the sum of every ledger entry. */
export async function allLedgerSums(
  db: Db,
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
export async function orderLinkedEntries(db: Db): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('order_id', 'is not', null)
    .orderBy('id')
    .execute();
}
