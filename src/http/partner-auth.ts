import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PartnerWithSecrets } from '../db/repos/partners.ts';
import { MISS, type PartnerDirectory } from '../app/partner-directory.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import {
  parseSignatureHeader,
  parseTimestampedHeader,
  SIGNATURE_HEADER,
  TIMESTAMP_TOLERANCE_SECONDS,
  TIMESTAMPED_HEADER,
  timestampedPrefix,
  verify,
} from '../signature.ts';
import { reasonBody, sendError } from './errors.ts';

const AUTHENTICATED = Symbol('authenticated partner');
/** Set for a timestamped request whose signature this process saw within its window: a replay. */
export const REPLAYED = Symbol('replayed signature');
const EMPTY = Buffer.alloc(0);

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerWithSecrets;
    [AUTHENTICATED]: PartnerWithSecrets | null;
    [REPLAYED]: string | null;
  }
}

const UNAUTHORIZED = { statusCode: 401, error: 'Unauthorized', message: 'Missing X-Hmac-Signature header' };
// One answer for every 403 cause: it must not tell a prober which part was wrong.
const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Invalid signature' };
const OUTSIDE_WINDOW = {
  statusCode: 401,
  error: 'Unauthorized',
  message: 'Signature timestamp outside the allowed window',
};
const TIMESTAMPED_REQUIRED = {
  statusCode: 401,
  error: 'Unauthorized',
  message: 'Timestamped signature required',
};
const MINUTE = 60_000;
/** What a partner id may be (the partners table's own check): any other is no partner, unlooked-up. */
const PARTNER_ID = /^[a-z0-9][a-z0-9_-]{1,63}$/;
/**
 * An unknown (or disabled) partner's signature is checked against this key all the same, so it
 * takes as long to refuse as a known partner's wrong one (decision 0046).
 */
const DUMMY_SECRETS = [randomBytes(32).toString('hex')];

/**
 * The timestamped signatures accepted lately (decision 0086), so that a capture replayed within its
 * window is counted apart from the partner's own requests and cannot use up its rate limit. A
 * signature is remembered for twice the tolerance (a `t` may be that far from another); at most
 * `max` are kept, the oldest forgotten first, so memory stays bounded whatever the traffic.
 */
export class RecentSignatures {
  readonly #seen = new Map<string, number>();
  readonly #max: number;
  constructor(max = 200_000) {
    this.#max = max;
  }
  /** Whether `key` was seen within the window; remembered from now either way. */
  seen(key: string, now = Date.now()): boolean {
    const until = this.#seen.get(key);
    const replay = until !== undefined && until > now;
    if (until !== undefined) this.#seen.delete(key);
    this.#seen.set(key, now + 2 * TIMESTAMP_TOLERANCE_SECONDS * 1000);
    if (this.#seen.size > this.#max) this.#seen.delete(this.#seen.keys().next().value!);
    return replay;
  }
}

/** What the headers say: the partner, and what the signature covers beside the body. */
interface Claim {
  partnerId: string;
  signature: Buffer;
  /** The timestamped form's `"<t>.POST /v1/<endpoint>."`; undefined for the contract's X-Hmac-Signature. */
  prefix: string | undefined;
}

/**
 * Signature authentication of /v1 (docs/api-reference.md#signing-requests; decisions 0007, 0045): a
 * request with neither signature header
 * is refused before the body is read (401). X-Polita-Signature, when present, is the header
 * checked (its `t` within 300 s of the real clock, else 401 saying so), X-Hmac-Signature otherwise;
 * the HMAC over the raw bytes is checked against the partner's valid secrets (403), and a partner
 * switched to timestamped signatures refuses the contract's header alone (401). Only then is the
 * body parsed (src/http/partner-pipeline.ts names the steps in their order).
 *
 * Failed authentications are counted per client address (`request.ip`, behind TRUST_PROXY),
 * across instances; past `failuresPerMinute` a failing request gets 429 instead of its 401/403. A
 * correctly signed request is never refused by this limit (decision 0046).
 */
export function partnerAuthentication(
  app: FastifyInstance,
  partners: PartnerDirectory,
  limits: { counter: SharedWindowCounter; failuresPerMinute: number },
): PartnerAuthentication {
  // Set by the signature check before any handler runs; reading it earlier is a bug, said at once.
  // A slot on the request (every request has it, so its shape stays one), not a WeakMap entry.
  app.decorateRequest(AUTHENTICATED, null);
  app.decorateRequest(REPLAYED, null);
  const recent = new RecentSignatures();
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
  /** A failed authentication: counted, and answered with `body`, or 429 past the address's limit. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, body: typeof FORBIDDEN): false => {
    const { current, ttl } = limits.counter.read(key(request), MINUTE);
    if (current >= limits.failuresPerMinute) {
      const after = Math.max(1, Math.ceil(ttl / 1000));
      reply.header('retry-after', after);
      sendError(
        reply,
        reasonBody(429, `Too many failed authentications from this address; retry after ${after} s`),
      );
      return false;
    }
    limits.counter.incr(key(request), MINUTE);
    sendError(reply, body);
    return false;
  };

  const requireSignatureHeader = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (
      request.headers[SIGNATURE_HEADER] === undefined &&
      request.headers[TIMESTAMPED_HEADER] === undefined
    ) {
      refuse(request, reply, UNAUTHORIZED);
      return;
    }
    done();
  };

  /** The headers read: a claim to check, or the answer already sent (false). */
  const claimOf = (request: FastifyRequest, reply: FastifyReply): Claim | false => {
    const timestamped = request.headers[TIMESTAMPED_HEADER];
    if (timestamped !== undefined) {
      const parsed = typeof timestamped === 'string' ? parseTimestampedHeader(timestamped) : null;
      if (!parsed) return refuse(request, reply, FORBIDDEN);
      // The real clock, never the sandbox clock: a partner's clock is the real one.
      if (Math.abs(Date.now() / 1000 - parsed.seconds) > TIMESTAMP_TOLERANCE_SECONDS) {
        return refuse(request, reply, OUTSIDE_WINDOW);
      }
      const endpoint = (request.routeOptions.url ?? '').slice('/v1/'.length);
      return { ...parsed, prefix: timestampedPrefix(parsed.t, endpoint) };
    }
    const header = request.headers[SIGNATURE_HEADER];
    const parsed = typeof header === 'string' ? parseSignatureHeader(header) : null;
    if (!parsed) return refuse(request, reply, FORBIDDEN);
    return { ...parsed, prefix: undefined };
  };

  /** The signature against the partner's secrets: false when it answered. */
  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    claim: Claim,
    partner: PartnerWithSecrets | undefined,
  ): boolean => {
    const usable = partner !== undefined && !partner.disabled;
    // An unknown or disabled partner costs the same HMAC as a known one (against a dummy key).
    const secrets = usable ? partner.secrets : DUMMY_SECRETS;
    const valid = verify(secrets, request.rawBody ?? EMPTY, claim.signature, claim.prefix);
    if (!usable || !valid) return refuse(request, reply, FORBIDDEN);
    if (claim.prefix === undefined && partner.require_timestamped_signature) {
      return refuse(request, reply, TIMESTAMPED_REQUIRED);
    }
    request.partner = partner;
    if (claim.prefix !== undefined) {
      // The first 16 bytes of an HMAC-SHA512 name it well enough.
      const key = claim.signature.toString('base64url', 0, 16);
      if (recent.seen(key)) request[REPLAYED] = key;
    }
    return true;
  };

  // A callback hook: with the partner cached (nearly every request) it takes no promise at all.
  const verifySignature = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const claim = claimOf(request, reply);
    if (!claim) return;
    if (!PARTNER_ID.test(claim.partnerId)) {
      refuse(request, reply, FORBIDDEN);
      return;
    }
    const known = partners.cached(claim.partnerId);
    if (known !== MISS) {
      if (admit(request, reply, claim, known)) done();
      return;
    }
    partners.get(claim.partnerId).then(
      (partner) => {
        let admitted: boolean;
        try {
          admitted = admit(request, reply, claim, partner);
        } catch (err) {
          return done(err as Error);
        }
        if (admitted) done();
      },
      (err: Error) => done(err),
    );
  };
  return { requireSignatureHeader, verifySignature };
}

/** The two steps of signature authentication, as hooks for the partner API's pipeline. */
export interface PartnerAuthentication {
  /** onRequest: a request with neither signature header is refused before its body is read (401). */
  requireSignatureHeader(request: FastifyRequest, reply: FastifyReply, done: () => void): void;
  /** preValidation: the signature over the kept bytes names the partner (`request.partner`), or 401/403. */
  verifySignature(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void;
}
