import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;

export async function recordAttempt(
  db: Conn,
  a: {
    orderId: string;
    url: string | null;
    trigger: 'completion' | 'operator';
    at: Date;
    httpStatus: number | null;
    error: string | null;
    latencyMs: number;
  },
): Promise<void> {
  await db
    .insertInto('webhook_attempts')
    .values({
      order_id: a.orderId,
      url: a.url,
      trigger: a.trigger,
      attempted_at: a.at,
      http_status: a.httpStatus,
      error: a.error,
      latency_ms: a.latencyMs,
    })
    .execute();
}

export async function attemptsFor(db: Conn, orderId: string) {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();
}
