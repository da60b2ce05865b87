import fastifyRateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import { REPLAYED } from './partner-auth.ts';

const MINUTE = 60_000;

/**
 * The per-partner limit of /v1 (decision 0008), by @fastify/rate-limit (decision 0034):
 * `rate_limit_per_minute` requests a minute, else `defaultPerMinute`, counted across instances by
 * the counter the signature check shares. Past it the answer is 429 with Retry-After, the
 * X-RateLimit-Limit, -Remaining and -Reset headers, and the JSON error shape (the root error
 * handler's, from the error built here).
 *
 * The plugin is loaded but hooks nothing itself (`global: false`): the answer is its check, as a
 * preValidation hook the partner API's pipeline places after the signature check, which names the
 * partner it counts for.
 */
export async function partnerRateLimit(
  app: FastifyInstance,
  counter: SharedWindowCounter,
  defaultPerMinute: number,
): Promise<preValidationHookHandler> {
  await app.register(fastifyRateLimit, {
    global: false,
    timeWindow: MINUTE,
    // The plugin constructs its store; this one hands it the counter the signature check shares.
    store: class implements FastifyRateLimitStore {
      incr(...[key, done, timeWindow]: Parameters<FastifyRateLimitStore['incr']>) {
        done(null, counter.incr(key, timeWindow));
      }
      child() {
        return this;
      }
    },
    // A replayed timestamped request is counted under its signature, not against the partner
    // (decision 0086): a capture sent again and again cannot use up the partner's limit.
    keyGenerator: (req) =>
      req[REPLAYED] === null ? `partner:${req.partner.id}` : `replay:${req.partner.id}:${req[REPLAYED]}`,
    max: (req) => req.partner.rate_limit_per_minute ?? defaultPerMinute,
    // Only a refusal carries the limit's headers: an answer within the limit carries none.
    addHeadersOnExceeding: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
    },
    errorResponseBuilder: (_req, ctx) =>
      Object.assign(
        new Error(
          `Rate limit exceeded: ${ctx.max} requests a minute; retry after ${Math.ceil(ctx.ttl / 1000)} s`,
        ),
        { statusCode: 429 },
      ),
  });
  return app.rateLimit();
}
