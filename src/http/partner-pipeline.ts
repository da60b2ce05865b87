import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import type { Services } from '../app/services.ts';
import { partnerAuthentication } from './partner-auth.ts';
import { partnerRateLimit } from './partner-rate-limit.ts';
import { keepSignedBytes, parseSignedBody } from './raw-body.ts';
import { guardParamsAndQuery } from './text-guard.ts';
import type { App } from './typed.ts';

/**
 * What every /v1 request goes through before its route's own steps, in the order it goes through
 * them (decision 0101). Fastify runs a scope's hooks of one kind in the order they were added, and
 * this is the one place that adds them:
 *
 * 1. onRequest: a request with neither signature header is refused, before its body is read (401).
 * 2. Body: the bytes, at most 64 KiB whatever the Content-Type, kept as `request.rawBody` and not
 *    parsed (Fastify's content-type parsing, with a parser that keeps them).
 * 3. preValidation: the signature over those bytes names the partner, or 401/403; failures are
 *    counted per client address (decisions 0007, 0045, 0046).
 * 4. preValidation: the bytes parsed as JSON into `request.body`, or 400 (decision 0003), then
 *    path parameters and query string checked for what PostgreSQL cannot store, or 400 (the root
 *    scope's check of them leaves /v1 to this step, so that it comes after the signature).
 * 5. preValidation: the partner's rate limit, or 429 (decision 0008).
 *
 * Then each route's own: its preValidation (refusing a webhook's fields, resend-event's own
 * limit), the schema (400), an idempotent route's Idempotency-Key (`...idempotent` in its options,
 * src/http/idempotency.ts), the handler, and the answer, stored for an idempotent route.
 */
export async function installPartnerPipeline(
  app: App,
  svc: Services,
  counter: SharedWindowCounter,
): Promise<void> {
  const authentication = partnerAuthentication(app, svc.partners, {
    counter,
    failuresPerMinute: svc.config.authFailuresPerMinute,
  });
  const rateLimit = await partnerRateLimit(app, counter, svc.config.rateLimitPerMinute);
  app.addHook('onRequest', authentication.requireSignatureHeader);
  keepSignedBytes(app);
  app.addHook('preValidation', authentication.verifySignature);
  app.addHook('preValidation', parseSignedBody);
  app.addHook('preValidation', guardParamsAndQuery);
  app.addHook('preValidation', rateLimit);
}
