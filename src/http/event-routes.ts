import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { listEvents, resendEvent } from '../app/partner-events.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import type { Services } from '../app/services.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/order-state.ts';
import { reasonBody, sendError } from './errors.ts';
import type { IdempotentRoute } from './idempotency.ts';
import { partnerDoc as doc } from './schemas.ts';
import { errorResponses as errors, type App } from './typed.ts';

const oneOf = <const T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });

const EventId = Type.String({ minLength: 1, maxLength: 64, description: 'An X-Polita-Event-Id' });
const EventType = oneOf(WEBHOOK_EVENT_TYPES);

export const Event = Type.Object(
  {
    id: Type.String({ description: 'The X-Polita-Event-Id of its deliveries' }),
    type: EventType,
    created_at: Type.String({ description: 'ISO-8601 with offset' }),
    order_id: Type.String(),
    data: Type.Object(
      {
        orderId: Type.String(),
        status: Type.String(),
        event: Type.Optional(oneOf(['corrected', 'expiring'])),
      },
      { description: 'The webhook body the event sends' },
    ),
    delivery: Type.Object({
      status: oneOf(['delivered', 'pending', 'failed', 'not_subscribed']),
      attempts: Type.Integer({ description: 'Attempts made so far, re-sends included' }),
    }),
  },
  { description: 'An event of one of the partner’s orders' },
);

export const eventSchemas = {
  listEvents: {
    body: Type.Object({
      after: Type.Optional(EventId),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Default 50' })),
      types: Type.Optional(Type.Array(EventType, { maxItems: 20 })),
      order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }),
    response: {
      200: Type.Object({ events: Type.Array(Event), has_more: Type.Boolean() }),
      ...errors,
    },
  },
  resendEvent: {
    body: Type.Object({ id: EventId }),
    response: {
      202: Type.Object({ id: Type.String(), delivery: Type.Literal('queued') }),
      ...errors,
    },
  },
};

/** Re-sends a partner may ask for in a minute (decision 0091). */
export const RESENDS_PER_MINUTE = 60;
const MINUTE = 60_000;

/**
 * The partner's events: list-events and resend-event (decision 0091). Registered from
 * partnerRoutes, inside its scope: signed, rate-limited and idempotent as the order endpoints.
 */
export async function eventRoutes(
  app: App,
  svc: Services,
  counter: SharedWindowCounter,
  idempotent: IdempotentRoute,
): Promise<void> {
  app.post(
    '/v1/list-events',
    {
      schema: {
        ...doc('List the partner’s events of the last 30 days', 'listEvents'),
        ...eventSchemas.listEvents,
      },
    },
    async (req) => listEvents(svc, req.partner, req.body),
  );
  // Its own limit, across instances, beside the partner's: after the signature and before the
  // idempotency key is claimed, so a refused re-send stores nothing.
  const resendLimit = async (req: FastifyRequest, reply: FastifyReply) => {
    const { current, ttl } = counter.incr(`resend-event:${req.partner.id}`, MINUTE);
    if (current <= RESENDS_PER_MINUTE) return;
    const after = Math.max(1, Math.ceil(ttl / 1000));
    reply.header('retry-after', after);
    return sendError(
      reply,
      reasonBody(429, `Too many re-sends: at most ${RESENDS_PER_MINUTE} a minute; retry after ${after} s`),
    );
  };
  app.post(
    '/v1/resend-event',
    {
      schema: { ...doc('Send an event to the webhook again', 'resendEvent'), ...eventSchemas.resendEvent },
      ...idempotent,
      preValidation: resendLimit,
    },
    async (req, reply) => reply.code(202).send(await resendEvent(svc, req.partner, req.body.id)),
  );
}
