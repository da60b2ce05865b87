import type { FastifyReply, FastifyRequest } from 'fastify';
import { beginIdempotent, finishIdempotent, requestHash } from '../app/idempotency.ts';
import type { Services } from '../app/services.ts';
import { reasonBody, sendError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours an Idempotency-Key header (create-order, confirm-order, pay-order-from-balance). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotencyKey?: string;
  }
}

const HEADER = 'idempotency-key';
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const conflict = (message: string) => ({ statusCode: 409, error: 'Conflict', message });

/**
 * The Idempotency-Key header, as the options an idempotent route spreads into its own
 * (`app.post(url, { schema, ...idempotent }, handler)`): the key claimed, or its first answer
 * replayed, after the signature and the schema (a request refused by either stores nothing, as at
 * Stripe); the answer stored before it is sent, so a retry that follows a lost answer finds it; and
 * `config.idempotent`, which the API document reads to name the header.
 */
export function idempotentRoute(svc: Services) {
  const claimKey = async (req: FastifyRequest, reply: FastifyReply) => {
    const key = req.headers[HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || !VALID_KEY.test(key)) {
      return sendError(reply, reasonBody(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters'));
    }
    const claim = await beginIdempotent(svc, {
      partnerId: req.partner.id,
      key,
      requestHash: requestHash(req.routeOptions.url ?? req.url, req.rawBody ?? Buffer.alloc(0)),
    });
    switch (claim.state) {
      case 'claimed':
        req.idempotencyKey = key;
        return;
      case 'answered':
        return reply
          .code(claim.status)
          .type('application/json; charset=utf-8')
          .header('idempotent-replayed', 'true')
          .send(claim.body);
      case 'other-body':
        return sendError(
          reply,
          conflict(
            'This Idempotency-Key was used with a different request body; use a new key for a new request',
          ),
        );
      case 'running':
        return sendError(
          reply,
          conflict(
            'A request with this Idempotency-Key is still being processed; retry after it has answered',
          ),
        );
    }
  };

  // What could not be written while the database was away, written once it answers again
  // (decision 0050): a key let go after an unavailability answer, or the answer of a request whose
  // work committed just before the database went. Until then a retry with the key is told that
  // its first request is still being processed.
  const later = new Map<string, () => Promise<void>>();
  const writeLater = async () => {
    for (const [id, write] of later) {
      try {
        await write();
        later.delete(id);
      } catch (err) {
        if (!svc.health.report(err)) later.delete(id);
        return;
      }
    }
  };
  svc.health.onChange((up) => {
    if (up) void writeLater();
  });

  const storeAnswer = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = req.idempotencyKey;
    if (key === undefined) return payload;
    req.idempotencyKey = undefined;
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    // The unavailability answer itself is never stored: its key is let go, so the retry runs.
    const finish = () =>
      finishIdempotent(svc, { partnerId: req.partner.id, key, status: reply.statusCode, body });
    try {
      await finish();
    } catch (err) {
      if (!svc.health.report(err)) throw err;
      later.set(`${req.partner.id}\n${key}`, finish);
      if (svc.health.up) setTimeout(() => void writeLater(), 1000).unref();
      // A success not stored is not sent: the error handler answers that the database is away.
      if (reply.statusCode < 500) throw err;
    }
    return payload;
  };

  return { config: { idempotent: true }, preHandler: claimKey, onSend: storeAnswer };
}

export type IdempotentRoute = ReturnType<typeof idempotentRoute>;
