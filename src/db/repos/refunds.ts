import type { Selectable, Transaction } from 'kysely';
import type { DB, RefundsTable, Db } from '../schema.ts';

export type RefundRow = Selectable<RefundsTable>;

export async function insertRefund(
  trx: Transaction<DB>,
  r: Omit<RefundRow, 'settled_at'> & { settled_at: Date | null },
): Promise<void> {
  await trx.insertInto('refunds').values(r).execute();
}

export async function findRefund(db: Db, orderId: string): Promise<RefundRow | undefined> {
  return db.selectFrom('refunds').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

export async function allRefunds(db: Db): Promise<RefundRow[]> {
  return db.selectFrom('refunds').selectAll().execute();
}

/** Refunds of a partner's customer-paid orders made in [from, to): money owed to customers, not in the wallet. */
export async function customerRefundsBetween(
  db: Db,
  partnerId: string,
  from: Date,
  to: Date,
): Promise<RefundRow[]> {
  return db
    .selectFrom('refunds as r')
    .innerJoin('orders as o', 'o.id', 'r.order_id')
    .selectAll('r')
    .where('o.partner_id', '=', partnerId)
    .where('r.method', '=', 'customer')
    .where('r.created_at', '>=', from)
    .where('r.created_at', '<', to)
    .orderBy('r.created_at')
    .execute();
}
