import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { WebhookEventType } from '../domain/order-state.ts';
import { createOrderEvent, releaseNextEvent, takeQueuedDeliveries } from '../db/repos/webhooks.ts';
import { dispatchOutbox } from './outbox-dispatch.ts';
import type { Services } from './services.ts';

/** Event ids: `evt_` and 24 hex digits (96 random bits), the same on every attempt of the event. */
export function newEventId(svc: Pick<Services, 'randomBytes'>): string {
  return `evt_${Buffer.from(svc.randomBytes(12)).toString('hex')}`;
}

/**
 * The event of an order's transition, in the transaction that made the transition: it exists iff
 * the transition commits, and its first delivery job with it. Nothing happens for a partner without
 * a webhook URL or one that does not receive this status (`webhook_events`).
 */
export async function emitOrderEvent(
  svc: Pick<Services, 'jobs' | 'randomBytes'>,
  trx: Transaction<DB>,
  order: { id: string; partner_id: string },
  status: WebhookEventType,
  at: Date,
): Promise<void> {
  const event = await createOrderEvent(trx, {
    id: newEventId(svc),
    orderId: order.id,
    partnerId: order.partner_id,
    status,
    at,
  });
  if (event?.state === 'pending') await enqueueDelivery(svc, trx, event.id, order.partner_id, 0);
}

/** After an event of an order settles (delivered or given up), the next one of that order goes. */
export async function releaseNext(
  svc: Pick<Services, 'jobs'>,
  trx: Transaction<DB>,
  order: { id: string; partner_id: string },
): Promise<void> {
  const next = await releaseNextEvent(trx, order.id);
  if (next) await enqueueDelivery(svc, trx, next, order.partner_id, 0);
}

/** One delivery job per attempt, grouped by partner: a partner's slow endpoint holds only its own slots. */
export async function enqueueDelivery(
  svc: Pick<Services, 'jobs'>,
  trx: Transaction<DB>,
  eventId: string,
  partnerId: string,
  afterSeconds: number,
): Promise<void> {
  await svc.jobs.enqueue(
    trx,
    'deliver-webhook',
    { eventId },
    { group: partnerId, ...(afterSeconds > 0 ? { startAfterSeconds: afterSeconds } : {}) },
  );
}

/** Events turned into deliver-webhook jobs by one transaction. */
export const DELIVERY_BATCH = 500;

const firstDelivery = (q: { event_id: string; partner_id: string }) => ({
  data: { eventId: q.event_id },
  group: q.partner_id,
});

/**
 * Creates the first deliver-webhook jobs of up to {@link DELIVERY_BATCH} events queued in the
 * webhook outbox (by the statement that completes an issued order), deleting their rows in the same
 * transaction (see dispatchOutbox): each gets exactly one job, or stays queued for the next dispatch.
 */
export function dispatchQueuedDeliveries(svc: Pick<Services, 'db' | 'jobs'>): Promise<number> {
  return dispatchOutbox(svc, takeQueuedDeliveries, DELIVERY_BATCH, 'deliver-webhook', firstDelivery);
}
