import type { LookupFunction } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { findOrder } from '../db/repos/orders.ts';
import { findPartner } from '../db/repos/partners.ts';
import { recordAttempt } from '../db/repos/webhooks.ts';
import { signatureHeader } from '../signature.ts';
import type { Services } from './services.ts';
import { checkedAddresses, urlHost, type ResolvedAddress } from './webhook-url.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface DeliveryResult {
  httpStatus: number | null;
  error: string | null;
}

/**
 * One attempt to tell the partner an order completed: `{"orderId":…,"status":"completed"}`
 * signed with the partner's newest secret, 10 s timeout, no automatic retry (spec). Every attempt
 * is recorded for the operator, who can send it again.
 *
 * The host is resolved once (svc.resolve), every address is checked against the webhook address
 * rule (webhook-url.ts), and the connection is made only to those checked addresses: a name that
 * resolves differently a moment later (DNS rebinding) cannot redirect it. Redirects are not followed.
 */
export async function deliverWebhook(
  svc: Services,
  orderId: string,
  trigger: 'completion' | 'operator',
): Promise<DeliveryResult> {
  const order = await findOrder(svc.db, orderId);
  if (!order || order.status !== 'completed') return { httpStatus: null, error: `order is not completed` };
  const partner = await findPartner(svc.db, order.partner_id);
  const url = partner?.webhook_url ?? null;
  const started = performance.now();
  let result: DeliveryResult;
  if (!partner || !url) {
    result = { httpStatus: null, error: 'no webhook URL registered' };
  } else {
    const body = JSON.stringify({ orderId, status: 'completed' });
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
          'x-hmac-signature': signatureHeader(partner.id, partner.secrets[0]!, body),
        },
        signal,
      );
      result = { httpStatus: status, error: status === 200 ? null : `expected 200, got ${status}` };
    } catch (err) {
      result = { httpStatus: null, error: signal.aborted ? 'timed out after 10 s' : errorText(err) };
    }
  }
  await recordAttempt(svc.db, {
    orderId,
    url,
    trigger,
    at: new Date(await svc.clock.now()),
    httpStatus: result.httpStatus,
    error: result.error,
    latencyMs: Math.round(performance.now() - started),
  });
  return result;
}

/**
 * POSTs `body` to `target`, connecting only to `addresses` (the socket's lookup hook hands out
 * these and never asks DNS), and answers the response status as soon as it is known; the response
 * body is discarded. No connection pooling: every attempt connects afresh.
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
        agent: false,
        lookup,
        signal,
      },
      (res) => {
        res.on('error', () => {});
        resolve(res.statusCode ?? 0);
        res.destroy();
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
