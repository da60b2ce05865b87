import type { LookupFunction } from 'node:net';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import { findOrder, lockOrder } from '../db/repos/orders.ts';
import { findPartner } from '../db/repos/partners.ts';
import {
  countResend,
  ensureOperatorEvent,
  findEvent,
  findOrderEvent,
  holdOrderForSettle,
  markDelivered,
  recordAttempt,
  settleAttempt,
  settleUnlessWaiting,
} from '../db/repos/webhooks.ts';
import { WEBHOOK_EVENT_STATUSES, type WebhookEventStatus } from '../domain/order-state.ts';
import { signatureHeader, webhookSignature } from '../signature.ts';
import { audit, type Actor } from './actor.ts';
import type { Services } from './services.ts';
import { emitOrderEvent, enqueueDelivery, newEventId, releaseNext } from './webhook-events.ts';
import { checkedAddresses, urlHost, type ResolvedAddress } from './webhook-url.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The operator's test event: a well-formed order id that no order has, and a status no order has. */
export const TEST_EVENT_BODY = '{"orderId":"TST000000TST","status":"test"}';

export interface DeliveryResult {
  eventId: string;
  url: string | null;
  delivered: boolean;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
}

interface Target {
  id: string;
  webhook_url: string | null;
  /** Active secrets, newest first. */
  secrets: string[];
}

/**
 * One attempt to deliver an event's exact `body` to the partner's webhook URL: 10 s timeout, a 2xx
 * answer delivers it. Signed twice (docs/api-reference.md#webhook-headers): the contract's
 * `X-Hmac-Signature` over the body with the newest
 * secret, and `X-Polita-Signature: t=<unix seconds>,v1=<hex HMAC-SHA512 of "<t>.<body>">` with one
 * v1 per valid secret (newest first), beside `X-Polita-Event-Id` and `X-Polita-Timestamp`.
 *
 * The host is resolved once (svc.resolve), every address is checked against the webhook address
 * rule (webhook-url.ts), and the connection is made only to those checked addresses: a name that
 * resolves differently a moment later (DNS rebinding) cannot redirect it. Redirects are not followed.
 */
export async function attemptDelivery(
  svc: Services,
  partner: Target | undefined,
  eventId: string,
  body: string,
): Promise<DeliveryResult> {
  const url = partner?.webhook_url ?? null;
  const started = performance.now();
  const done = (httpStatus: number | null, error: string | null): DeliveryResult => ({
    eventId,
    url,
    delivered: error === null,
    httpStatus,
    error,
    latencyMs: Math.round(performance.now() - started),
  });
  if (!partner || !url) return done(null, 'no webhook URL registered');
  if (partner.secrets.length === 0) return done(null, 'the partner has no active secret to sign with');
  // Unix seconds of this attempt, by the real clock: receivers compare it with theirs.
  const timestamp = Math.floor(Date.now() / 1000);
  const signal = AbortSignal.timeout(WEBHOOK_TIMEOUT_MS);
  try {
    const target = new URL(url);
    const addresses = await untilAborted(
      checkedAddresses(urlHost(target), svc.config.sandbox, svc.resolve),
      signal,
    );
    const status = await post(
      target,
      addresses,
      body,
      {
        'content-type': 'application/json',
        'user-agent': 'Polita-Webhooks/1',
        'x-hmac-signature': signatureHeader(partner.id, partner.secrets[0]!, body),
        'x-polita-event-id': eventId,
        'x-polita-timestamp': String(timestamp),
        'x-polita-signature': webhookSignature(partner.secrets, timestamp, body, eventId),
      },
      signal,
    );
    return done(status, status >= 200 && status < 300 ? null : `expected 2xx, got ${status}`);
  } catch (err) {
    return done(null, signal.aborted ? 'timed out after 10 s' : errorText(err));
  }
}

/**
 * An automatic attempt of a pending event (the deliver-webhook job). A 2xx settles it; otherwise
 * the next attempt is enqueued after the next delay of the retry schedule, and after the last the
 * event is failed (the operator can re-send it). A settled event lets the next of its order go.
 * A job for an event that is no longer pending (an operator's re-send delivered it) does nothing.
 */
export async function deliverEvent(svc: Services, eventId: string): Promise<DeliveryResult | undefined> {
  const event = await findEvent(svc.db, eventId);
  if (!event || event.state !== 'pending') return undefined;
  // The authentication cache (≤ 1 s old, changed at once by this instance's own changes): reading
  // the partner afresh cost three queries an attempt.
  const partner = await svc.partners.get(event.partner_id);
  const result = await attemptDelivery(svc, partner, event.id, event.body);
  const attempt = event.attempts + 1;
  const schedule = svc.config.webhookRetrySchedule;
  const delay = result.delivered ? undefined : schedule[attempt - 1];
  const state = result.delivered ? 'delivered' : delay === undefined ? 'failed' : 'pending';
  const at = new Date(await svc.clock.now());
  const record = attemptRow(event.order_id, result, at, 'automatic', attempt);
  // Settled with no event of the order waiting behind it (the common case): one statement, no
  // transaction. Otherwise (an event waits, or one was being created: see settleUnlessWaiting)
  // the transaction that settles it releases the next, with its job.
  const alone =
    state !== 'pending' && (await settleUnlessWaiting(svc.db, record, { attempts: attempt, state, at }));
  if (!alone || !alone.applied) {
    await svc.db.transaction().execute(async (trx) => {
      const { updated, next } = await settleAttempt(trx, record, {
        attempts: attempt,
        state,
        // Jobs wait by the real clock, whatever the sandbox clock says.
        nextAt: delay === undefined ? null : new Date(Date.now() + delay * 1000),
        at,
      });
      if (!updated) return;
      if (state === 'pending') await enqueueDelivery(svc, trx, event.id, event.partner_id, delay!);
      else if (next) await enqueueDelivery(svc, trx, next, event.partner_id, 0);
    });
  }
  if (state === 'failed') {
    svc.log.warn(
      { eventId, orderId: event.order_id, attempts: attempt },
      'webhook event failed after retries',
    );
  }
  return result;
}

/**
 * The operator's re-send: one attempt now of the order's event for its current status (completed,
 * failed, refunded or expired), with the event's id, whatever state the event is in; delivered, it
 * settles the event. An order whose partner had no URL when it changed gets its event made now.
 */
export async function resendOrderEvent(
  svc: Services,
  actor: Actor,
  orderId: string,
): Promise<DeliveryResult> {
  const order = await findOrder(svc.db, orderId);
  if (!order) throw notFound('Order not found');
  const status = order.status;
  if (!isEventStatus(status)) {
    throw badRequest(
      `Order is ${status}: only a completed, failed, refunded or expired order has an event to re-send`,
    );
  }
  const partner = await findPartner(svc.db, order.partner_id);
  if (!partner) throw notFound('Partner not found');
  if (!partner.webhook_events.includes(status)) {
    throw badRequest(`Partner ${partner.id} does not receive ${status} events (webhook_events)`);
  }
  const at = new Date(await svc.clock.now());
  const event =
    (await findOrderEvent(svc.db, orderId, status)) ??
    (await ensureOperatorEvent(svc.db, {
      id: newEventId(svc),
      orderId,
      partnerId: partner.id,
      status,
      at,
    }));
  const result = await attemptDelivery(svc, partner, event.id, event.body);
  await svc.db.transaction().execute(async (trx) => {
    // The order first (waiting for a transaction that is creating an event of it), so that
    // releaseNext sees an event created behind this one: see holdOrderForSettle.
    await holdOrderForSettle(trx, orderId);
    await recordAttempt(trx, attemptRow(orderId, result, at, 'operator', null));
    await audit(trx, actor, {
      action: 'order.resend_webhook',
      target: orderId,
      after: { event_id: event.id, status, delivered: result.delivered, http_status: result.httpStatus },
      at,
    });
    if (result.delivered && (await markDelivered(trx, event.id, at)) && event.state === 'pending') {
      await releaseNext(svc, trx, order);
    }
  });
  return result;
}

/**
 * A re-send the partner asked for (resend-event): one attempt of the event, its id and body, to the
 * partner's current URL, whatever state it is in, counted with its attempts; delivered, it settles
 * the event as an operator's re-send does. Not retried: the partner may ask again.
 */
export async function redeliverEvent(svc: Services, eventId: string): Promise<DeliveryResult | undefined> {
  const event = await findEvent(svc.db, eventId);
  if (!event) return undefined;
  const partner = await svc.partners.get(event.partner_id);
  const result = await attemptDelivery(svc, partner, event.id, event.body);
  const at = new Date(await svc.clock.now());
  await svc.db.transaction().execute(async (trx) => {
    await holdOrderForSettle(trx, event.order_id);
    await recordAttempt(trx, attemptRow(event.order_id, result, at, 'partner', null));
    await countResend(trx, event.id);
    if (result.delivered && (await markDelivered(trx, event.id, at)) && event.state === 'pending') {
      await releaseNext(svc, trx, { id: event.order_id, partner_id: event.partner_id });
    }
  });
  return result;
}

/**
 * A deliver-webhook job enqueued before events existed ({orderId}, one attempt): its completion
 * becomes an event now, delivered and retried like any other, so an upgrade loses no webhook.
 */
export async function emitLegacyCompletion(svc: Services, orderId: string | undefined): Promise<void> {
  if (!orderId) return;
  const at = new Date(await svc.clock.now());
  await svc.db.transaction().execute(async (trx) => {
    // Under the order's row lock, as every event is created (createOrderEvent): a refund of the
    // order is then either before (the order is no longer completed) or after this event.
    const order = await lockOrder(trx, orderId);
    if (!order || order.status !== 'completed') return;
    await emitOrderEvent(svc, trx, order, 'completed', at);
  });
}

/** The operator's test event to a partner's webhook URL, before any order: one attempt, not recorded. */
export async function sendTestEvent(svc: Services, actor: Actor, partnerId: string): Promise<DeliveryResult> {
  const partner = await findPartner(svc.db, partnerId);
  if (!partner) throw notFound('Partner not found');
  if (!partner.webhook_url) {
    throw conflict(
      `Partner ${partnerId} has no webhook URL: set one with PATCH /admin/partners/${partnerId}`,
    );
  }
  const result = await attemptDelivery(svc, partner, newEventId(svc), TEST_EVENT_BODY);
  await audit(svc.db, actor, {
    action: 'partner.webhook_test',
    target: partnerId,
    after: { event_id: result.eventId, delivered: result.delivered, http_status: result.httpStatus },
    at: new Date(await svc.clock.now()),
  });
  svc.log.info(
    { partnerId, eventId: result.eventId, httpStatus: result.httpStatus, error: result.error },
    'webhook test event sent',
  );
  return result;
}

const isEventStatus = (s: string): s is WebhookEventStatus =>
  (WEBHOOK_EVENT_STATUSES as readonly string[]).includes(s);

function attemptRow(
  orderId: string,
  r: DeliveryResult,
  at: Date,
  trigger: 'automatic' | 'operator' | 'partner',
  attempt: number | null,
) {
  return {
    orderId,
    eventId: r.eventId,
    attempt,
    url: r.url,
    trigger,
    at,
    httpStatus: r.httpStatus,
    error: r.error,
    latencyMs: r.latencyMs,
  };
}

/**
 * Connections kept open between deliveries to the same host and port: a new TCP (and TLS)
 * connection per webhook cost more than the delivery itself. Every pooled socket was opened through
 * the checked lookup of the request that opened it, so a reused one is connected to an address
 * that passed the rule. Idle sockets close after 4 s, before a receiver's usual 5 s keep-alive ends
 * (a receiver that closes one just as it is reused fails that attempt, and the retry schedule sends
 * it again: a receiver dropping connections looks the same, and must count as a failed attempt).
 */
const keepAlive = { keepAlive: true, maxSockets: 16, maxFreeSockets: 16, timeout: 4_000 };
const agents = { 'http:': new HttpAgent(keepAlive), 'https:': new HttpsAgent(keepAlive) };

/** An answer's body is read and dropped (so the connection can be reused), up to this much. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs `body` to `target`, connecting only to `addresses` (the socket's lookup hook hands out
 * these and never asks DNS), and answers the response status as soon as it is known; the response
 * body is read and discarded, so that its connection can be reused.
 */
function post(
  target: URL,
  addresses: ResolvedAddress[],
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<number> {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const fitting = family ? addresses.filter((a) => a.family === family) : addresses;
    if (fitting.length === 0) {
      const err: NodeJS.ErrnoException = new Error(
        `webhook host ${urlHost(target)} has no IPv${family} address`,
      );
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
    } else if (options.all) {
      callback(null, fitting);
    } else {
      callback(null, fitting[0]!.address, fitting[0]!.family);
    }
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        hostname: urlHost(target),
        ...(target.port ? { port: Number(target.port) } : {}),
        path: `${target.pathname}${target.search}`,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: target.protocol === 'https:' ? agents['https:'] : agents['http:'],
        lookup,
        signal,
      },
      (res) => {
        res.on('error', () => {});
        resolve(res.statusCode ?? 0);
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `p`, or the signal's reason once it aborts first (so resolving the host counts against the timeout). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A connection error as one line; several failed addresses (happy eyeballs) are listed together. */
function errorText(err: unknown): string {
  const e = err as Error & { errors?: Error[]; code?: string };
  if (e.message) return e.message;
  if (e.errors?.length) return e.errors.map((x) => x.message).join('; ');
  return e.code ?? String(err);
}
