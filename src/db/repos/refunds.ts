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
