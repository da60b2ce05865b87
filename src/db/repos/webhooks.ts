import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { WebhookEventType } from '../../domain/order-state.ts';
import type { Db } from '../database.ts';
import type { DB, WebhookEventsTable } from '../schema.ts';
import { compiledOnce, type Param } from '../compiled.ts';

export type WebhookEventRow = Selectable<WebhookEventsTable>;

/** An order's event to record: its body follows from the order and the status (eventBody). */
export type NewOrderEvent = {
  id: string;
  orderId: string;
  partnerId: string;
  status: WebhookEventType;
  at: Date;
};

/**
 * The exact bytes every attempt of an order's event sends (and signs): the contract's webhook body
 * for a status; a correction and a renewal notice name the order's status and the event
 * (docs/api-reference.md#webhooks).
 */
export function eventBody(orderId: string, type: WebhookEventType): string {
  return JSON.stringify(eventData(orderId, type));
}

/** The webhook body of an event, as the object its bytes encode (list-events answers it so). */
export function eventData(
  orderId: string,
  type: WebhookEventType,
): { orderId: string; status: string; event?: 'corrected' | 'expiring' } {
  if (type === 'corrected' || type === 'expiring') return { orderId, status: 'completed', event: type };
  return { orderId, status: type };
}

/**
 * The state a new event starts in: `not_subscribed` for a partner without a webhook URL or that does
 * not receive the type (recorded all the same, for list-events: decision 0091), else as
 * newEventState. `partner` names the partners row the statement reads.
 */
export function deliveryState(
  partner: string,
  type: unknown,
  orderId: unknown,
): RawBuilder<'waiting' | 'pending' | 'not_subscribed'> {
  const p = sql.ref(partner);
  return sql<'waiting' | 'pending' | 'not_subscribed'>`case
    when ${p}.webhook_url is null or not (${type}::text = any(${p}.webhook_events)) then 'not_subscribed'
    else ${newEventState(orderId)} end`;
}

/**
 * The state a new event of `orderId` (a value, or a column such as `sql.ref('moved.id')`) starts
 * in: `waiting` behind an earlier event of the order still open, else `pending`.
 */
export function newEventState(orderId: unknown): RawBuilder<'waiting' | 'pending'> {
  return sql<'waiting' | 'pending'>`case when exists (
    select 1 from webhook_events w
    where w.order_id = ${orderId} and w.state in ('waiting', 'pending')
  ) then 'waiting' else 'pending' end`;
}

const orderEventStatement = compiledOnce((db, param: Param<NewOrderEvent & { body: string }>) =>
  db
    .insertInto('webhook_events')
    .columns(['id', 'partner_id', 'order_id', 'status', 'body', 'state', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('partners')
        .select([
          sql<string>`${param('id')}::text`.as('id'),
          'partners.id',
          sql<string>`${param('orderId')}::text`.as('order_id'),
          sql<WebhookEventType>`${param('status')}::text`.as('status'),
          sql<string>`${param('body')}::text`.as('body'),
          deliveryState('partners', param('status'), param('orderId')).as('state'),
          sql<Date>`${param('at')}::timestamptz`.as('created_at'),
        ])
        .where('partners.id', '=', param('partnerId')),
    )
    .onConflict((oc) => oc.columns(['order_id', 'status']).doNothing())
    .returning(['id', 'state']),
);

/**
 * Records the event of an order's transition for its partner, in the caller's transaction, which
 * holds the order's row lock, so the events of one order are created one after another. The event
 * is `not_subscribed` when the partner has no webhook URL or does not receive this type; else
 * `pending` (to be delivered now) unless an earlier event of the same order is still open: then it
 * `waiting`s behind it, so a receiver sees the events of an order in the order they happened.
 * Returns the event and its state, or undefined when the order had an event of this type already.
 *
 * The caller holds the order's row lock (lockOrder, or the UPDATE of transition()) since an
 * earlier statement, and, as its event may wait, has moved the order's status (only the first event
 * of a completed order is made without a transition, and nothing is open before it): that lock and
 * that status change are what a settle of the earlier event meets (holdOrderForSettle,
 * settleUnlessWaiting), so that a waiting event inserted here is never missed by the settle that
 * should release it.
 */
export async function createOrderEvent(
  trx: Transaction<DB>,
  e: NewOrderEvent,
): Promise<{ id: string; state: 'waiting' | 'pending' | 'not_subscribed' } | undefined> {
  const { rows } = await orderEventStatement(trx, { ...e, body: eventBody(e.orderId, e.status) });
  return rows[0] as { id: string; state: 'waiting' | 'pending' | 'not_subscribed' } | undefined;
}

/**
 * The event an operator's re-send sends: the recorded one, or, when none was (the partner had no
 * webhook URL then, or did not receive that status), one made now that no automatic delivery owns.
 */
export async function ensureOperatorEvent(db: Db, e: NewOrderEvent): Promise<WebhookEventRow> {
  return db
    .insertInto('webhook_events')
    .values({
      id: e.id,
      partner_id: e.partnerId,
      order_id: e.orderId,
      status: e.status,
      body: eventBody(e.orderId, e.status),
      state: 'failed',
      created_at: e.at,
      settled_at: e.at,
    })
    .onConflict((oc) => oc.columns(['order_id', 'status']).doUpdateSet({ order_id: e.orderId }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

const eventStatement = compiledOnce((db, param: Param<{ id: string }>) =>
  db.selectFrom('webhook_events').selectAll().where('id', '=', param('id')),
);

export async function findEvent(db: Db, id: string): Promise<WebhookEventRow | undefined> {
  return (await eventStatement(db, { id })).rows[0];
}

export async function findOrderEvent(
  db: Db,
  orderId: string,
  status: WebhookEventType,
): Promise<WebhookEventRow | undefined> {
  return db
    .selectFrom('webhook_events')
    .selectAll()
    .where('order_id', '=', orderId)
    .where('status', '=', status)
    .executeTakeFirst();
}

/** An order's events as the operator reads them, oldest first. */
export async function eventsFor(db: Db, orderId: string) {
  return db
    .selectFrom('webhook_events')
    .select(['id', 'status', 'state', 'attempts', 'created_at', 'next_attempt_at', 'settled_at'])
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();
}

/**
 * An operator's re-send that got through: the event is delivered, whatever its state was. The
 * caller holds the order (holdOrderForSettle) since an earlier statement, so that a later
 * releaseNextEvent sees any event created behind this one.
 */
export async function markDelivered(trx: Transaction<DB>, id: string, at: Date): Promise<boolean> {
  const res = await trx
    .updateTable('webhook_events')
    .set({ state: 'delivered', next_attempt_at: null, settled_at: at })
    .where('id', '=', id)
    .where('state', '<>', 'delivered')
    .returning('state')
    .executeTakeFirst();
  return res !== undefined;
}

/**
 * The lock a transaction that settles an event of an order takes first, in a statement of its own,
 * before the statements that settle the event and release the next one.
 *
 * Why: a transaction that creates an event (createOrderEvent) holds the order's row lock (FOR UPDATE,
 * or the UPDATE of its transition) from before its insert until it commits, and its insert sees the
 * event being settled as still open, so its event waits. A settle that looked for waiting events
 * before that commit would miss it, and it would wait for ever. FOR SHARE conflicts with both of
 * those locks: once it is granted, any such transaction has committed, and the settle's next
 * statement (a new snapshot, under READ COMMITTED) sees its waiting event and releases it; a creator
 * that comes after waits for the settle to commit, and then sees the event settled. Waiting for the
 * lock does not refresh the snapshot of the statement that waited, hence a statement of its own.
 *
 * Lock order: the order row first, then the event rows (the settled one, then the released one),
 * as the creators take the order row (then the wallet) before they insert their event.
 */
export async function holdOrderForSettle(trx: Transaction<DB>, orderId: string): Promise<void> {
  await trx.selectFrom('orders').select('id').where('id', '=', orderId).forShare().execute();
}

/** The oldest event of an order still waiting behind a settled one, made pending; its id, if any. */
export async function releaseNextEvent(trx: Transaction<DB>, orderId: string): Promise<string | undefined> {
  const next = await trx
    .updateTable('webhook_events')
    .set({ state: 'pending' })
    .where('seq', '=', (eb) =>
      eb
        .selectFrom('webhook_events')
        .select((e) => e.fn.min('seq').as('seq'))
        .where('order_id', '=', orderId)
        .where('state', '=', 'waiting'),
    )
    .where('state', '=', 'waiting')
    .where(
      sql<boolean>`not exists (select 1 from webhook_events p where p.order_id = ${orderId} and p.state = 'pending')`,
    )
    .returning('id')
    .executeTakeFirst();
  return next?.id;
}

export interface AttemptRecord {
  orderId: string;
  eventId: string;
  attempt: number | null;
  url: string | null;
  trigger: 'automatic' | 'operator' | 'partner';
  at: Date;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
}

const attemptValues = (a: AttemptRecord) => ({
  order_id: a.orderId,
  event_id: a.eventId,
  attempt: a.attempt,
  url: a.url,
  trigger: a.trigger,
  attempted_at: a.at,
  http_status: a.httpStatus,
  error: a.error,
  latency_ms: a.latencyMs,
});

/**
 * A settled attempt (delivered, or failed for good) of an event that no later event of its order
 * waits behind, the common case: the attempt and the outcome in one statement, outside any
 * transaction (nothing is enqueued, so nothing else needs to commit with it). When an event of the
 * order is waiting it changes nothing and answers `applied: false`: then settleAttempt, in a
 * transaction, settles and releases the next one with its job.
 *
 * The statement first locks the order's row FOR SHARE (as holdOrderForSettle, and in the same
 * order: the order row, then the event row), which waits for a transaction creating an event of
 * the order (it holds the order's row lock) to commit. Its "none waiting" check was made on the
 * statement's snapshot, taken before that commit, and would miss the waiting event it inserted;
 * but that transaction updated the order's row, and PostgreSQL re-checks a row it waited for
 * (or found changed) against its newest version: the lock's condition "the row version (xmin) is
 * the one of the snapshot" then fails, and the statement changes nothing (`applied: false`). The same holds
 * when it committed after the snapshot was taken but before the lock was asked for. No round trip
 * more: the attempt's foreign key locked the same row at the end of the statement already.
 */
export async function settleUnlessWaiting(
  db: Db,
  a: AttemptRecord,
  o: { attempts: number; state: 'delivered' | 'failed'; at: Date },
): Promise<{ applied: boolean; updated: boolean }> {
  const { rows } = await settleUnlessWaitingStatement(db, {
    ...attemptValues(a),
    attempts: o.attempts,
    state: o.state,
    settled_at: o.at,
  });
  const row = rows[0]!;
  return { applied: Boolean(row.applied), updated: Boolean(row.updated) };
}

const settleUnlessWaitingStatement = compiledOnce(
  (
    db,
    param: Param<
      ReturnType<typeof attemptValues> & {
        attempts: number;
        state: 'delivered' | 'failed';
        settled_at: Date;
      }
    >,
  ) => {
    // Every transaction that creates an event of the order updates the order's row (a transition,
    // a correction, which may leave the status as it was), and each update gives the row a new
    // xmin: an unchanged xmin means that no event was committed since the snapshot.
    const applies = sql<boolean>`exists (select 1 from held) and not exists (
      select 1 from webhook_events w where w.order_id = ${param('order_id')} and w.state = 'waiting')`;
    return db
      .with('held', (q) =>
        q
          .selectFrom('orders as o')
          .select('o.id')
          .where('o.id', '=', param('order_id'))
          .where(sql<boolean>`o.xmin = (select s.xmin from orders s where s.id = ${param('order_id')})`)
          .forShare('o'),
      )
      .with('attempt', (q) =>
        q
          .insertInto('webhook_attempts')
          .columns([
            'order_id',
            'event_id',
            'attempt',
            'url',
            'trigger',
            'attempted_at',
            'http_status',
            'error',
            'latency_ms',
          ])
          .expression(
            db
              .selectNoFrom([
                sql<string>`${param('order_id')}::text`.as('order_id'),
                sql<string>`${param('event_id')}::text`.as('event_id'),
                sql<number | null>`${param('attempt')}::int`.as('attempt'),
                sql<string | null>`${param('url')}::text`.as('url'),
                sql<'automatic' | 'operator'>`${param('trigger')}::text`.as('trigger'),
                sql<Date>`${param('attempted_at')}::timestamptz`.as('attempted_at'),
                sql<number | null>`${param('http_status')}::int`.as('http_status'),
                sql<string | null>`${param('error')}::text`.as('error'),
                sql<number>`${param('latency_ms')}::int`.as('latency_ms'),
              ])
              .where(applies),
          )
          .returning('id'),
      )
      .with('outcome', (q) =>
        q
          .updateTable('webhook_events')
          .set({
            attempts: param('attempts'),
            state: param('state'),
            next_attempt_at: null,
            settled_at: param('settled_at'),
          })
          .where('id', '=', param('event_id'))
          .where('state', '=', 'pending')
          .where(applies)
          .returning('id'),
      )
      .selectNoFrom((eb) => [
        applies.as('applied'),
        eb.exists(eb.selectFrom('outcome').select('outcome.id')).as('updated'),
      ]);
  },
);

/** A re-send the partner asked for was attempted: list-events counts it with the attempts. */
export async function countResend(trx: Transaction<DB>, id: string): Promise<void> {
  await trx
    .updateTable('webhook_events')
    .set((eb) => ({ resends: eb('resends', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function recordAttempt(db: Db, a: AttemptRecord): Promise<void> {
  await db.insertInto('webhook_attempts').values(attemptValues(a)).execute();
}

/**
 * An automatic attempt and its outcome in one statement (one round trip, decision 0031):
 * the attempt recorded; the event delivered, failed for good, or due again at `nextAt`, guarded by
 * its state (an outcome computed from a stale read changes nothing); and, when it settled, the oldest event of its order waiting behind
 * it made pending (as releaseNextEvent; the settling event still reads as pending inside the
 * statement, so it is left out of that check). Answers whether the outcome was recorded and the
 * released event's id.
 *
 * A settling outcome holds the order first (holdOrderForSettle, one statement more), so that the
 * statement that releases sees an event created behind this one by a transaction that was still
 * open; a retry (`pending`) releases nothing and needs no lock.
 */
export async function settleAttempt(
  trx: Transaction<DB>,
  a: AttemptRecord,
  o: { attempts: number; state: 'delivered' | 'failed' | 'pending'; nextAt: Date | null; at: Date },
): Promise<{ updated: boolean; next: string | undefined }> {
  if (o.state !== 'pending') await holdOrderForSettle(trx, a.orderId);
  const row = await trx
    .with('attempt', (q) => q.insertInto('webhook_attempts').values(attemptValues(a)).returning('id'))
    .with('outcome', (q) =>
      q
        .updateTable('webhook_events')
        .set({
          attempts: o.attempts,
          state: o.state,
          next_attempt_at: o.nextAt,
          settled_at: o.state === 'pending' ? null : o.at,
        })
        .where('id', '=', a.eventId)
        .where('state', '=', 'pending')
        .returning('id'),
    )
    .with('released', (q) =>
      q
        .updateTable('webhook_events')
        .set({ state: 'pending' })
        .where('seq', '=', (eb) =>
          eb
            .selectFrom('webhook_events')
            .select((e) => e.fn.min('seq').as('seq'))
            .where('order_id', '=', a.orderId)
            .where('state', '=', 'waiting'),
        )
        .where('state', '=', 'waiting')
        .where(sql<boolean>`${o.state !== 'pending'}::boolean`)
        .where((eb) => eb.exists(eb.selectFrom('outcome').select('outcome.id')))
        .where(
          sql<boolean>`not exists (select 1 from webhook_events p where p.order_id = ${a.orderId} and p.state = 'pending' and p.id <> ${a.eventId})`,
        )
        .returning('id'),
    )
    .selectNoFrom((eb) => [
      eb.exists(eb.selectFrom('outcome').select('outcome.id')).as('updated'),
      eb.selectFrom('released').select('released.id').as('next'),
    ])
    .executeTakeFirstOrThrow();
  return { updated: Boolean(row.updated), next: row.next ?? undefined };
}

export async function attemptsFor(db: Db, orderId: string) {
  return db
    .selectFrom('webhook_attempts')
    .leftJoin('webhook_events', 'webhook_events.id', 'webhook_attempts.event_id')
    .selectAll('webhook_attempts')
    .select('webhook_events.status as event_status')
    .where('webhook_attempts.order_id', '=', orderId)
    .orderBy('webhook_attempts.id')
    .execute();
}

/**
 * Takes up to `limit` events queued in the webhook outbox for their first delivery job, deleting
 * their rows in the caller's transaction (which creates the jobs); rows another dispatcher has
 * taken are skipped, not waited for.
 */
export async function takeQueuedDeliveries(
  trx: Transaction<DB>,
  limit: number,
): Promise<{ event_id: string; partner_id: string }[]> {
  const { rows } = await sql<{ event_id: string; partner_id: string }>`
    delete from webhook_outbox where event_id in (
      select event_id from webhook_outbox limit ${limit} for update skip locked)
    returning event_id, partner_id`.execute(trx);
  return rows;
}
