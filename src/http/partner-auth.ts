import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PartnerWithSecrets } from '../db/repos/partners.ts';
import type { PartnerDirectory } from '../app/partner-directory.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import { parseSignatureHeader, SIGNATURE_HEADER, verify } from '../signature.ts';
import { reasonBody, sendError } from './errors.ts';
import { readJsonBody } from './raw-body.ts';

/** Where the signature check leaves the partner (a field of every request: no WeakMap to keep). */
const kPartner: unique symbol = Symbol('polita.partner');

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerWithSecrets;
    [kPartner]: PartnerWithSecrets | null;
  }
}

const UNAUTHORIZED = { statusCode: 401, error: 'Unauthorized', message: 'Missing X-Hmac-Signature header' };
// One answer for every 403 cause: it must not tell a prober which part was wrong.
const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Invalid signature' };
const MINUTE = 60_000;

/**
 * Signature authentication of /v1: a missing header is refused before the body is read (401);
 * then the HMAC over the raw bytes is checked against the partner's valid secrets (403), and only
 * then is the body parsed and validated. A client address whose requests failed authentication
 * `failuresPerMinute` times in a minute gets 429 until the minute is over, counted across instances.
 */
export function installPartnerAuth(
  app: FastifyInstance,
  partners: PartnerDirectory,
  limits: { counter: SharedWindowCounter; failuresPerMinute: number },
): void {
  // Set by the signature check before any handler runs; reading it earlier is a bug, said at once.
  app.decorateRequest(kPartner, null);
  app.decorateRequest('partner', {
    getter(this: FastifyRequest) {
      const partner = this[kPartner];
      if (!partner) throw new Error('request.partner read before the signature was checked');
      return partner;
    },
    setter(this: FastifyRequest, partner: PartnerWithSecrets) {
      this[kPartner] = partner;
    },
  });
  const key = (request: FastifyRequest) => `auth-failures:${request.ip}`;
  /** Answers 429 and true when the address is over its failures. */
  const throttled = (request: FastifyRequest, reply: FastifyReply): boolean => {
    let over = 0;
    limits.counter.read(
      key(request),
      (_err, res) => (over = res.current >= limits.failuresPerMinute ? Math.ceil(res.ttl / 1000) : 0),
      MINUTE,
    );
    if (over === 0) return false;
    reply.header('retry-after', over);
    sendError(
      reply,
      reasonBody(429, `Too many failed authentications from this address; retry after ${over} s`),
    );
    return true;
  };
  const refuse = (request: FastifyRequest, reply: FastifyReply, body: typeof FORBIDDEN) => {
    limits.counter.incr(key(request), () => {}, MINUTE);
    return sendError(reply, body);
  };

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.headers[SIGNATURE_HEADER] === undefined) {
      if (!throttled(request, reply)) refuse(request, reply, UNAUTHORIZED);
      return;
    }
    done();
  });

  // A callback hook: a cached partner (nearly every request) is checked without a promise.
  app.addHook(
    'preValidation',
    (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      if (throttled(request, reply)) return;
      const header = request.headers[SIGNATURE_HEADER];
      const parsed = typeof header === 'string' ? parseSignatureHeader(header) : null;
      if (!parsed) {
        refuse(request, reply, FORBIDDEN);
        return;
      }
      const check = (partner: PartnerWithSecrets | undefined) => {
        const body = request.rawBody ?? EMPTY;
        if (!partner || partner.disabled || !verify(partner.secrets, body, parsed.signature)) {
          refuse(request, reply, FORBIDDEN);
          return;
        }
        request.partner = partner;
        if (readJsonBody(request, reply)) done();
      };
      const cached = partners.peek(parsed.partnerId);
      if (cached) check(cached.partner);
      else partners.get(parsed.partnerId).then(check).catch(done);
    },
  );
}

const EMPTY = Buffer.alloc(0);

/**
 * The per-partner limit of /v1: each signed request counts in its partner's window of a minute
 * (shared by every instance, rate-limit-store.ts), and one past `limitOf(partner)` answers 429 with
 * Retry-After and the X-RateLimit-* headers. What @fastify/rate-limit did with this store, as a
 * callback hook: that plugin's async hook cost every request five promises.
 */
export function installPartnerRateLimit(
  app: FastifyInstance,
  limits: { counter: SharedWindowCounter; limitOf: (partner: PartnerWithSecrets) => number },
): void {
  app.addHook(
    'preValidation',
    (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      const partner = request.partner;
      const max = limits.limitOf(partner);
      let current = 0;
      let ttl = 0;
      limits.counter.incr(`partner:${partner.id}`, (_err, res) => ({ current, ttl } = res), MINUTE);
      if (current <= max) {
        done();
        return;
      }
      const seconds = Math.ceil(ttl / 1000);
      reply
        .header('x-ratelimit-limit', max)
        .header('x-ratelimit-remaining', 0)
        .header('x-ratelimit-reset', seconds)
        .header('retry-after', seconds);
      done(
        Object.assign(new Error(`Rate limit exceeded: ${max} requests a minute; retry after ${seconds} s`), {
          statusCode: 429,
        }),
      );
    },
  );
}
