import type { Db } from '../schema.ts';

/**
 * A partner's newest webhook delivery attempts, newest first: those of the orders of its newest
 * events. Bounded by the partner's event index, so a partner with few deliveries in a large table
 * costs as little as one with many.
 */
export async function recentDeliveries(db: Db, partnerId: string, limit: number) {
  return db
    .selectFrom('webhook_attempts as a')
    .leftJoin('webhook_events as e', 'e.id', 'a.event_id')
    .select([
      'a.id',
      'a.order_id',
      'a.event_id',
      'e.status as event_status',
      'e.state as event_state',
      'a.attempt',
      'a.trigger',
      'a.url',
      'a.attempted_at',
      'a.http_status',
      'a.error',
      'a.latency_ms',
    ])
    .where('a.order_id', 'in', (eb) =>
      eb
        .selectFrom('webhook_events')
        .select('order_id')
        .where('partner_id', '=', partnerId)
        .orderBy('seq', 'desc')
        .limit(limit),
    )
    .orderBy('a.id', 'desc')
    .limit(limit)
    .execute();
}
