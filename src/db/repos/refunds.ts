import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, RefundsTable } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;
export type RefundRow = Selectable<RefundsTable>;

export async function insertRefund(
  trx: Transaction<DB>,
  r: Omit<RefundRow, 'settled_at'> & { settled_at: Date | null },
): Promise<void> {
  await trx.insertInto('refunds').values(r).execute();
}

export async function findRefund(db: Conn, orderId: string): Promise<RefundRow | undefined> {
  return db.selectFrom('refunds').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

export async function allRefunds(db: Conn): Promise<RefundRow[]> {
  return db.selectFrom('refunds').selectAll().execute();
}
