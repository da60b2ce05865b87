import type { Kysely, Transaction } from 'kysely';
import type { DB, SubWallet, WalletRow } from '../schema.ts';

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
  return updated;
}
