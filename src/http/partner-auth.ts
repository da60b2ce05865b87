import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PartnerWithSecrets } from '../db/repos/partners.ts';
import { MISS, type PartnerDirectory } from '../app/partner-directory.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import { parseSignatureHeader, SIGNATURE_HEADER, verify } from '../signature.ts';
import { reasonBody, sendError } from './errors.ts';
import { parseBody } from './raw-body.ts';

const AUTHENTICATED = Symbol('authenticated partner');
const EMPTY = Buffer.alloc(0);

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerWithSecrets;
    [AUTHENTICATED]: PartnerWithSecrets | null;
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
  // A slot on the request (every request has it, so its shape stays one), not a WeakMap entry.
  app.decorateRequest(AUTHENTICATED, null);
  app.decorateRequest('partner', {
    getter(this: FastifyRequest) {
      const partner = this[AUTHENTICATED];
      if (!partner) throw new Error('request.partner read before the signature was checked');
      return partner;
    },
    setter(this: FastifyRequest, partner: PartnerWithSecrets) {
      this[AUTHENTICATED] = partner;
    },
  });
  const key = (request: FastifyRequest) => `auth-failures:${request.ip}`;
  /** Answers 429 and true when the address is over its failures. */
  const throttled = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const { current, ttl } = limits.counter.read(key(request), MINUTE);
    const over = current >= limits.failuresPerMinute ? Math.ceil(ttl / 1000) : 0;
    if (over === 0) return false;
    reply.header('retry-after', over);
    sendError(
      reply,
      reasonBody(429, `Too many failed authentications from this address; retry after ${over} s`),
    );
    return true;
  };
  const refuse = (request: FastifyRequest, reply: FastifyReply, body: typeof FORBIDDEN) => {
    limits.counter.incr(key(request), MINUTE);
    return sendError(reply, body);
  };

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.headers[SIGNATURE_HEADER] === undefined) {
      if (!throttled(request, reply)) refuse(request, reply, UNAUTHORIZED);
      return;
    }
    done();
  });

  /** The signature against the partner's secrets, then the body parsed: false when it answered. */
  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    signature: Buffer,
    partner: PartnerWithSecrets | undefined,
  ): boolean => {
    if (!partner || partner.disabled || !verify(partner.secrets, request.rawBody ?? EMPTY, signature)) {
      refuse(request, reply, FORBIDDEN);
      return false;
    }
    request.partner = partner;
    return parseBody(request, reply);
  };

  // A callback hook: with the partner cached (nearly every request) it takes no promise at all.
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
      const known = partners.cached(parsed.partnerId);
      if (known !== MISS) {
        if (admit(request, reply, parsed.signature, known)) done();
        return;
      }
      partners.get(parsed.partnerId).then(
        (partner) => {
          let admitted: boolean;
          try {
            admitted = admit(request, reply, parsed.signature, partner);
          } catch (err) {
            return done(err as Error);
          }
          if (admitted) done();
        },
        (err: Error) => done(err),
      );
    },
  );
}
