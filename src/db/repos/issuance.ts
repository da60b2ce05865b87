import { sql } from 'kysely';
import { assertTransition } from '../../domain/order-state.ts';
import { compiledOnce, type Param } from '../compiled.ts';
import type { Db } from '../schema.ts';
import { deliveryState, eventBody } from './webhooks.ts';

export interface IssuedItem {
  idx: number;
  /** What the provider answered, as JSON. */
  issued: string;
  fileToken: string;
  pdf: Uint8Array;
}

/**
 * Completes an issued order in one self-committing statement: its last item (what the provider
 * answered, its policy PDF under a download token), the order moved from `from` to `completed`
 * with its history row, the order's `completed` event for the partner (recorded whether or not it
 * has a webhook URL: decision 0091) and, when it has one, that event queued in the webhook outbox for its first delivery job. One
 * round trip where a transaction and a job insert would take several: issuance's cost is round
 * trips (decision 0025).
 *
 * The item is stored even when the guard on the status misses (another attempt completed the
 * order meanwhile), as an item stored on its own would be. The event is the order's first
 * (completed is the first status with an event), so nothing is open before it and it is `pending`;
 * the rule that makes it `waiting` behind an open event (newEventState, createOrderEvent's too) is
 * kept all the same. Answers whether the order moved and the event queued, if one was.
 */
export async function completeIssuedOrder(
  db: Db,
  c: {
    orderId: string;
    from: 'paid' | 'processing';
    /** The item stored with the completion; none when every item was stored before. */
    item: IssuedItem | undefined;
    eventId: string;
    at: Date;
  },
): Promise<{ moved: boolean; queued: boolean }> {
  assertTransition(c.from, 'completed');
  const { rows } = await completionStatement(
    db,
    {
      ...c,
      idx: c.item?.idx,
      issued: c.item?.issued,
      fileToken: c.item?.fileToken,
      pdf: c.item?.pdf,
      body: eventBody(c.orderId, 'completed'),
    },
    c.item ? 'item' : '',
  );
  return { moved: rows[0]?.moved === true, queued: rows[0]?.queued === true };
}

const completionStatement = compiledOnce(
  (
    db,
    param: Param<{
      orderId: string;
      from: string;
      idx: number | undefined;
      issued: string | undefined;
      fileToken: string | undefined;
      pdf: Uint8Array | undefined;
      eventId: string;
      body: string;
      at: Date;
    }>,
    shape,
  ) => {
    const statement = sql<{ moved: boolean; queued: boolean }>`
    with ${
      shape === 'item'
        ? sql`item as (
            update order_items set issued = ${param('issued')}::jsonb, file_token = ${param('fileToken')}::text
            where order_id = ${param('orderId')}::text and idx = ${param('idx')}::int
            returning order_id, idx),
          document as (
            insert into documents (token, order_id, idx, pdf, created_at)
            select ${param('fileToken')}::text, item.order_id, item.idx, ${param('pdf')}::bytea, ${param('at')}::timestamptz
            from item),`
        : sql``
    }
    moved as (
      update orders set status = 'completed', completed_at = ${param('at')}::timestamptz, updated_at = ${param('at')}::timestamptz
      where id = ${param('orderId')}::text and status = ${param('from')}::text
      returning id, partner_id),
    history as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select moved.id, ${param('from')}::text, 'completed', 'all products issued', 'system', ${param('at')}::timestamptz
      from moved),
    event as (
      insert into webhook_events (id, partner_id, order_id, status, body, state, created_at)
      select ${param('eventId')}::text, p.id, moved.id, 'completed', ${param('body')}::text,
        ${deliveryState('p', 'completed', sql.ref('moved.id'))},
        ${param('at')}::timestamptz
      from moved join partners p on p.id = moved.partner_id
      on conflict (order_id, status) do nothing
      returning id, partner_id, state),
    queued as (
      insert into webhook_outbox (event_id, partner_id, queued_at)
      select event.id, event.partner_id, ${param('at')}::timestamptz from event where event.state = 'pending'
      returning event_id)
    select exists (select 1 from moved) as moved, exists (select 1 from queued) as queued`;
    return { compile: () => statement.compile(db) };
  },
);
