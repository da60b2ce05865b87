import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../domain/errors.ts';

/**
 * The one place errors become HTTP. Every error body is `{statusCode, error, message}`:
 * - 4xx: `error` and `message` both carry the reason, so a client reading either gets it;
 * - product rules: 500, `error: "Internal Server Error"`, `message: "[API] <reason>"` (spec);
 * - anything unexpected: 500 with only a request id: no stack, no SQL, no `[API]`.
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
};

export const reasonBody = (statusCode: number, reason: string): ErrorBody => ({
  statusCode,
  error: reason,
  message: reason,
});

export function sendError(reply: FastifyReply, body: ErrorBody): FastifyReply {
  return reply.code(body.statusCode).type('application/json').send(body);
}

export function installErrorHandler(app: FastifyInstance): void {
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
