import { sql, type Transaction } from 'kysely';
import type { DB } from '../schema.ts';

/** The longest notice any partner asks for: how far ahead of today the renewal job looks. */
export async function longestNotice(trx: Transaction<DB>): Promise<number> {
  const row = await trx
    .selectFrom('partners')
    .select((eb) => eb.fn.max('renewal_notice_days').as('days'))
    .executeTakeFirst();
  return Number(row?.days ?? 0);
}

/**
 * Marks up to `limit` completed orders whose policy ended before `today` as handled: no notice is
 * due for them any more, and they leave the job's index. Answers how many.
 */
export async function settleEndedPolicies(
  trx: Transaction<DB>,
  today: string,
  at: Date,
  limit: number,
): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    update orders set renewal_noticed_at = ${at}
    where id in (
      select id from orders
      where status = 'completed' and renewal_noticed_at is null and end_date < ${today}
      limit ${limit} for update skip locked)
    returning id`.execute(trx);
  return rows.length;
}

/**
 * Up to `limit` completed orders not yet handled whose last day is from `today` to `horizon` and
 * within their partner's notice, locked (rows another instance holds are skipped): the caller's
 * transaction then makes their notices.
 */
export async function lockDueOrders(
  trx: Transaction<DB>,
  today: string,
  horizon: string,
  limit: number,
): Promise<{ id: string; start_date: string | null; end_date: string }[]> {
  const { rows } = await sql<{ id: string; start_date: string | null; end_date: string }>`
    select o.id, o.start_date, o.end_date
    from orders o join partners p on p.id = o.partner_id
    where o.status = 'completed' and o.renewal_noticed_at is null
      and o.end_date >= ${today} and o.end_date <= ${horizon}
      and p.renewal_notice_days > 0
      and o.end_date <= to_char(${today}::date + p.renewal_notice_days, 'YYYY-MM-DD')
    order by o.end_date
    limit ${limit}
    for update of o skip locked`.execute(trx);
  return rows;
}

/**
 * The expiring events of locked due orders (`notices`), and every locked order in `handled`
 * marked handled, in one statement. An order that has an event still open (waiting or pending) is
 * left for a later run, neither noticed nor marked: as the caller holds its row lock, no event of
 * it can be created meanwhile, so a notice made here is `pending` with nothing before it, and the
 * events of an order still arrive in the order they happened. A partner without a webhook URL or
 * not receiving `expiring` gets its event recorded as `not_subscribed` (decision 0091). Pending
 * events are queued in the webhook outbox for their first delivery. Answers the events made, how
 * many were queued and how many orders were marked.
 */
export async function insertNotices(
  trx: Transaction<DB>,
  notices: { eventId: string; orderId: string; body: string }[],
  handled: string[],
  at: Date,
): Promise<{ events: number; queued: number; marked: number }> {
  const { rows } = await sql<{ events: string; queued: string; marked: string }>`
    with d as (
      select * from unnest(${notices.map((n) => n.eventId)}::text[], ${notices.map((n) => n.orderId)}::text[],
        ${notices.map((n) => n.body)}::text[]) as d(event_id, order_id, body)),
    busy as (
      select distinct w.order_id from webhook_events w
      where w.order_id = any(${handled}::text[]) and w.state in ('waiting', 'pending')),
    ev as (
      insert into webhook_events (id, partner_id, order_id, status, body, state, created_at)
      select d.event_id, p.id, d.order_id, 'expiring', d.body,
        case when p.webhook_url is null or not ('expiring' = any(p.webhook_events))
          then 'not_subscribed' else 'pending' end,
        ${at}::timestamptz
      from d join orders o on o.id = d.order_id join partners p on p.id = o.partner_id
      where d.order_id not in (select order_id from busy)
      on conflict (order_id, status) do nothing
      returning id, partner_id, state),
    queued as (
      insert into webhook_outbox (event_id, partner_id, queued_at)
      select ev.id, ev.partner_id, ${at}::timestamptz from ev where ev.state = 'pending'
      returning event_id),
    marked as (
      update orders set renewal_noticed_at = ${at}::timestamptz
      where id = any(${handled}::text[]) and id not in (select order_id from busy)
      returning id)
    select (select count(*) from ev) as events, (select count(*) from queued) as queued,
      (select count(*) from marked) as marked`.execute(trx);
  const row = rows[0];
  return {
    events: Number(row?.events ?? 0),
    queued: Number(row?.queued ?? 0),
    marked: Number(row?.marked ?? 0),
  };
}
