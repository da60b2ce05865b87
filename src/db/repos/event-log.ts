import { sql, type Transaction } from 'kysely';
import type { WebhookEventType } from '../../domain/order-state.ts';
import type { DB, Db, WebhookEventsTable } from '../schema.ts';

/** One event as list-events reads it. */
export interface ListedEvent {
  seq: string;
  id: string;
  status: WebhookEventType;
  created_at: Date;
  order_id: string;
  state: WebhookEventsTable['state'];
  attempts: number;
}

/** The position of a partner's own event, for a cursor; undefined for another's or an unknown id. */
export async function eventPosition(db: Db, partnerId: string, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_events')
    .select('seq')
    .where('id', '=', id)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst();
  return row === undefined ? undefined : String(row.seq);
}

/**
 * Up to `limit` of a partner's events created since `since`, after position `afterSeq`, oldest
 * first, with the filters. Several types are read as one ordered scan each of the (partner, type,
 * position) index, merged: a rare type among a partner's many events costs as little as a common one.
 */
export async function partnerEvents(
  db: Db,
  f: {
    partnerId: string;
    since: Date;
    afterSeq: string;
    limit: number;
    types?: readonly WebhookEventType[];
    orderId?: string;
  },
): Promise<ListedEvent[]> {
  const branch = (type: WebhookEventType | undefined) => sql`(
    select seq, id, status, created_at, order_id, state, attempts + resends as attempts
    from webhook_events
    where partner_id = ${f.partnerId} and seq > ${f.afterSeq}::bigint and created_at >= ${f.since}
      ${type ? sql`and status = ${type}` : sql``}
      ${f.orderId !== undefined ? sql`and order_id = ${f.orderId}` : sql``}
      ${f.orderId !== undefined && f.types ? sql`and status = any(${f.types}::text[])` : sql``}
    order by seq limit ${f.limit})`;
  const types = f.orderId === undefined ? f.types : undefined;
  const query =
    types && types.length > 0
      ? sql<ListedEvent>`select * from (${sql.join(types.map(branch), sql` union all `)}) e
          order by seq limit ${f.limit}`
      : branch(undefined);
  const { rows } = await query.execute(db);
  return rows as ListedEvent[];
}

/**
 * Deletes up to `limit` events created before `before` that no delivery waits on (neither waiting
 * nor pending), with their attempts; answers how many events went. Rows another purge holds are
 * skipped.
 */
export async function purgeEventsBefore(trx: Transaction<DB>, before: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ id: string; order_id: string }>`
    select id, order_id from webhook_events
    where created_at < ${before} and state not in ('waiting', 'pending')
    order by created_at limit ${limit}
    for update skip locked`.execute(trx);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  const orders = rows.map((r) => r.order_id);
  await sql`delete from webhook_attempts a
    using unnest(${orders}::text[], ${ids}::text[]) as d(order_id, id)
    where a.order_id = d.order_id and a.event_id = d.id`.execute(trx);
  await sql`delete from webhook_events where id = any(${ids}::text[])`.execute(trx);
  return rows.length;
}

/** A partner's newest events, newest first, as the portal's Developers page lists them. */
export async function recentEvents(db: Db, partnerId: string, since: Date, limit: number) {
  return db
    .selectFrom('webhook_events')
    .select(['id', 'status', 'order_id', 'state', 'created_at'])
    .select((eb) => eb('attempts', '+', eb.ref('resends')).as('attempts'))
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', since)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}
