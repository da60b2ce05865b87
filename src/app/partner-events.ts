import { badRequest, notFound } from '../domain/errors.ts';
import type { WebhookEventType } from '../domain/order-state.ts';
import { isoLocal } from '../domain/time.ts';
import { eventPosition, partnerEvents, purgeEventsBefore, type ListedEvent } from '../db/repos/event-log.ts';
import { findEvent } from '../db/repos/webhooks.ts';
import type { Services } from './services.ts';

/** How long every event is kept and listed (decision 0091). */
export const EVENT_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/** What list-events takes (docs/api-reference.md#list-events). */
export interface EventQuery {
  after?: string | undefined;
  limit?: number | undefined;
  types?: WebhookEventType[] | undefined;
  order_id?: string | undefined;
}

/** How an event's delivery reads on the wire: waiting behind an earlier event is pending too. */
export type DeliveryStatus = 'delivered' | 'pending' | 'failed' | 'not_subscribed';

const deliveryOf = (state: ListedEvent['state']): DeliveryStatus => (state === 'waiting' ? 'pending' : state);

/** The webhook body an event sends, as the object it encodes. */
interface EventData {
  orderId: string;
  status: string;
  event?: 'corrected' | 'expiring';
}

/**
 * list-events: the partner's own events of the last 30 days (by the service clock), oldest first
 * after the cursor, whether or not it has a webhook URL or receives their type (decision 0091).
 * The cursor is the id of one of its events; another partner's, or an unknown id, is refused.
 */
export async function listEvents(svc: Services, partner: { id: string }, q: EventQuery) {
  const limit = q.limit ?? 50;
  let afterSeq = '0';
  if (q.after !== undefined) {
    const seq = await eventPosition(svc.db, partner.id, q.after);
    if (seq === undefined) throw badRequest('Unknown cursor: after must be the id of one of your events');
    afterSeq = seq;
  }
  const now = await svc.clock.now();
  const rows = await partnerEvents(svc.db, {
    partnerId: partner.id,
    since: new Date(now - EVENT_RETENTION_DAYS * DAY_MS),
    afterSeq,
    limit: limit + 1,
    ...(q.types && q.types.length > 0 ? { types: [...new Set(q.types)] } : {}),
    ...(q.order_id !== undefined ? { orderId: q.order_id } : {}),
  });
  return {
    events: rows.slice(0, limit).map((e) => ({
      id: e.id,
      type: e.status,
      created_at: isoLocal(e.created_at.getTime()),
      order_id: e.order_id,
      data: JSON.parse(e.body) as EventData,
      delivery: { status: deliveryOf(e.state), attempts: e.attempts },
    })),
    has_more: rows.length > limit,
  };
}

/**
 * resend-event: queues one more attempt of the partner's event, the same id and body, to its
 * current webhook URL, whatever happened to it before (redeliverEvent makes it). The per-minute
 * limit is the route's.
 */
export async function resendEvent(
  svc: Services,
  partner: { id: string; webhook_url: string | null },
  id: string,
): Promise<{ id: string; delivery: 'queued' }> {
  const event = await findEvent(svc.db, id);
  if (!event || event.partner_id !== partner.id) throw notFound('Event not found');
  if (!partner.webhook_url) throw badRequest('No webhook URL');
  await svc.db.transaction().execute(async (trx) => {
    await svc.jobs.enqueue(trx, 'deliver-webhook', { eventId: id, resend: true }, { group: partner.id });
  });
  return { id, delivery: 'queued' };
}

/** Events removed by one statement of the retention job. */
const PURGE_BATCH = 5000;

/**
 * The retention job: removes events older than 30 days (by the service clock) that no delivery is
 * waiting on, and their attempts, in batches; answers how many went.
 */
export async function purgeOldEvents(svc: Services): Promise<number> {
  const before = new Date((await svc.clock.now()) - EVENT_RETENTION_DAYS * DAY_MS);
  let total = 0;
  for (;;) {
    const n = await svc.db.transaction().execute((trx) => purgeEventsBefore(trx, before, PURGE_BATCH));
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}
