import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import { reasonBody, sendError } from './errors.ts';

const MINUTE = 60_000;

/**
 * The per-partner limit of /v1 (decision 0008): `rate_limit_per_minute` requests a minute, else
 * `defaultPerMinute`, counted across instances by the counter the signature check shares. Past it
 * the answer is 429 with Retry-After and the JSON error shape, and the X-RateLimit-Limit,
 * -Remaining and -Reset headers @fastify/rate-limit sent with it.
 *
 * A callback hook after the signature check, where @fastify/rate-limit ran before: the plugin
 * awaits the key, the limit and the store on every request, four promises on get-offers' path;
 * this counts synchronously, as the counter answers at once.
 */
export function installPartnerRateLimit(
  app: FastifyInstance,
  counter: SharedWindowCounter,
  defaultPerMinute: number,
): void {
  app.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const max = request.partner.rate_limit_per_minute ?? defaultPerMinute;
    const { current, ttl } = counter.incr(`partner:${request.partner.id}`, MINUTE);
    if (current <= max) {
      done();
      return;
    }
    const seconds = Math.ceil(ttl / 1000);
    reply.headers({
      'x-ratelimit-limit': max,
      'x-ratelimit-remaining': 0,
      'x-ratelimit-reset': seconds,
      'retry-after': seconds,
    });
    sendError(
      reply,
      reasonBody(429, `Rate limit exceeded: ${max} requests a minute; retry after ${seconds} s`),
    );
  });
}
