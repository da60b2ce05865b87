import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditFailedOperatorAuth } from '../app/admin/operators.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import type { Services } from '../app/services.ts';
import { reasonBody, sendError } from './errors.ts';

const MINUTE = 60_000;

/**
 * Records a wrong operator token (on /admin, /metrics or the console's sign-in) from the request's
 * client address, and answers whether that address is now past its limit: then the caller answers
 * 429 (`refuseOverLimit`) instead of its 401/403. A correct token is never counted nor limited.
 */
export type OperatorAuthFailures = (
  req: FastifyRequest,
  via: 'api' | 'console',
) => Promise<{ retryAfter: number } | undefined>;

/**
 * Wrong operator tokens a minute per client address (ADMIN_AUTH_FAILURES_PER_MINUTE), counted across
 * instances by the shared counter (decisions 0008, 0046). Each failure is in the audit log (address,
 * route, time; never the token) up to the limit, then one entry per address and minute saying the
 * address is limited.
 */
export function operatorAuthFailures(
  svc: Services,
  counter: SharedWindowCounter,
  perMinute: number,
): OperatorAuthFailures {
  return async (req, via) => {
    const address = req.ip;
    const { current, ttl } = counter.incr(`operator-auth-failures:${address}`, MINUTE);
    const over = current > perMinute;
    const first = !over || counter.incr(`operator-auth-limited:${address}`, MINUTE).current === 1;
    if (first) {
      const route = req.routeOptions.url ?? req.url.split('?')[0]!;
      try {
        await auditFailedOperatorAuth(svc, {
          address,
          route,
          method: req.method,
          via,
          ...(over ? { limitedAt: perMinute } : {}),
        });
      } catch (err) {
        // The refusal stands without its entry: an audit write must not turn a 403 into a 500.
        req.log.warn({ err }, 'a failed operator authentication could not be written to the audit log');
      }
    }
    return over ? { retryAfter: Math.max(1, Math.ceil(ttl / 1000)) } : undefined;
  };
}

/** The 429 of an address past its wrong operator tokens, with Retry-After. */
export function refuseOverLimit(reply: FastifyReply, retryAfter: number): FastifyReply {
  reply.header('retry-after', retryAfter);
  return sendError(
    reply,
    reasonBody(429, `Too many wrong operator tokens from this address; retry after ${retryAfter} s`),
  );
}
