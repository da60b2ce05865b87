import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  isDatabaseUnavailable,
  RETRY_AFTER_SECONDS,
  unavailableMessage,
  type DatabaseHealth,
} from '../app/availability.ts';
import { DomainError, type ErrorCode } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the answer is a failure the error-rate metric counts (metrics.ts). */
    failure?: 'unexpected' | 'database_unavailable';
  }
}

/**
 * The one place errors become HTTP. Every error body is `{statusCode, error, message}`:
 * - 4xx: `error` and `message` both carry the reason, so a client reading either gets it;
 * - product rules: 500, `error: "Internal Server Error"`, `message: "[API] <reason>"` (the contract's
 *   convention: docs/api-reference.md#errors);
 * - anything unexpected: 500 with only a request id: no stack, no SQL, no `[API]`;
 * - the database unreachable (decision 0050): on /v1 the same 500 saying it is temporary, elsewhere
 *   503, both with Retry-After, logged once by the health watch rather than once a request.
 */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

const STATUS: Record<Exclude<ErrorCode, 'product_rule' | 'vehicle_not_found'>, number> = {
  bad_request: 400,
  not_found: 404,
  forbidden: 403,
  conflict: 409,
  provider_refused: 502,
};

export const reasonBody = (statusCode: number, reason: string): ErrorBody => ({
  statusCode,
  error: reason,
  message: reason,
});

export function sendError(reply: FastifyReply, body: ErrorBody): FastifyReply {
  return reply.code(body.statusCode).type('application/json').send(body);
}

/**
 * A failure because the database cannot be reached: marks the answer (Retry-After, the metric),
 * tells the health watch, and says so; false for any other error, which the caller handles.
 */
export function databaseAway(
  err: unknown,
  req: FastifyRequest,
  reply: FastifyReply,
  health: DatabaseHealth | undefined,
): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  health?.markDown(err);
  req.failure = 'database_unavailable';
  reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return true;
}

export function installErrorHandler(app: FastifyInstance, health?: DatabaseHealth): void {
  app.setErrorHandler((err: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof DomainError) {
      if (err.code === 'product_rule' || err.code === 'vehicle_not_found') {
        return sendError(reply, {
          statusCode: 500,
          error: 'Internal Server Error',
          message: `[API] ${err.reason}`,
        });
      }
      return sendError(reply, reasonBody(STATUS[err.code], err.reason));
    }
    if (err.validation) {
      return sendError(reply, reasonBody(400, err.message));
    }
    const status = err.statusCode ?? 500;
    if (status === 413) return sendError(reply, reasonBody(413, 'Request body is larger than 64 KiB'));
    if (status >= 400 && status < 500) {
      const reason =
        err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
          ? 'Body is not valid JSON'
          : err.message;
      return sendError(reply, reasonBody(status, reason));
    }
    if (databaseAway(err, request, reply, health)) {
      const message = unavailableMessage(request.id);
      return sendError(
        reply,
        request.url.startsWith('/v1/')
          ? { statusCode: 500, error: 'Internal Server Error', message }
          : { statusCode: 503, error: 'Service Unavailable', message },
      );
    }
    request.failure = 'unexpected';
    request.log.error({ err }, 'unexpected failure');
    return sendError(reply, {
      statusCode: 500,
      error: 'Internal Server Error',
      message: `Unexpected error; quote request id ${request.id} to the operator`,
    });
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, reasonBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`)),
  );
}
