import { findOrder } from '../db/repos/orders.ts';
import { findPartner } from '../db/repos/partners.ts';
import { recordAttempt } from '../db/repos/webhooks.ts';
import { signatureHeader } from '../signature.ts';
import type { Services } from './services.ts';
import { assertPublicDestination } from './webhook-url.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface DeliveryResult {
  httpStatus: number | null;
  error: string | null;
}

/**
 * One attempt to tell the partner an order completed: `{"orderId":…,"status":"completed"}`
 * signed with the partner's newest secret, 10 s timeout, no automatic retry (spec). Every attempt
 * is recorded for the operator, who can send it again.
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
    try {
      await assertPublicDestination(url, svc.config.sandbox);
      const res = await svc.fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hmac-signature': signatureHeader(partner.id, partner.secrets[0]!, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      await res.body?.cancel();
      result = {
        httpStatus: res.status,
        error: res.status === 200 ? null : `expected 200, got ${res.status}`,
      };
    } catch (err) {
      const e = err as Error & { cause?: Error };
      result = {
        httpStatus: null,
        error: e.name === 'TimeoutError' ? 'timed out after 10 s' : (e.cause?.message ?? e.message),
      };
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
