import { sql, type Transaction } from 'kysely';
import type { DB, Db } from '../schema.ts';

/** Queues a paid order for issuance in the caller's transaction: it is queued iff the payment commits. */
export async function queueIssuance(trx: Transaction<DB>, orderId: string, at: Date): Promise<void> {
  await trx.insertInto('issuance_outbox').values({ order_id: orderId, queued_at: at }).execute();
}

/**
 * Takes up to `limit` queued orders, deleting their rows in the caller's transaction (which creates
 * their jobs): rows another dispatcher has taken are skipped, not waited for. In the table's order,
 * not sorted: the outbox holds a few rows, all taken at once, and a sort (or an index on queued_at,
 * written by every payment) would be paid on every dispatch for an order nobody sees.
 */
export async function takeQueuedIssuance(trx: Transaction<DB>, limit: number): Promise<string[]> {
  const { rows } = await sql<{ order_id: string }>`
    delete from issuance_outbox where order_id in (
      select order_id from issuance_outbox limit ${limit} for update skip locked)
    returning order_id`.execute(trx);
  return rows.map((r) => r.order_id);
}

/** How many orders wait for their issue-order job, and since when (for monitoring). */
export async function queuedIssuance(db: Db): Promise<{ count: number; oldest: Date | null }> {
  const { rows } = await sql<{ count: number; oldest: Date | null }>`
    select count(*)::int as count, min(queued_at) as oldest from issuance_outbox`.execute(db);
  return rows[0]!;
}
