import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reasonBody, sendError } from './errors.ts';
import { BAD_TEXT, badBodyText } from './text-guard.ts';

export const BODY_LIMIT = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes exactly as received: what the signature covers. */
    rawBody?: Buffer;
  }
}

/**
 * Bodies are read as raw bytes and parsed only when the route is ready: partner routes verify the
 * signature over these bytes first, so an unsigned garbage body gets 401/403, never 400.
 */
export function installRawBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const keepBytes = (req: FastifyRequest, body: Buffer, done: (err: null, body: undefined) => void) => {
    req.rawBody = body;
    done(null, undefined);
  };
  // application/json named as well as the catch-all: Fastify remembers the parser it found for a
  // named type, but looks the catch-all up again (parsing the Content-Type) on every request.
  for (const type of ['application/json', '*'])
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, keepBytes);
}

/**
 * The raw bytes become `request.body`; or a 400 is sent, and false answered, when they are not JSON
 * or hold a string PostgreSQL cannot store.
 */
export function parseBody(request: FastifyRequest, reply: FastifyReply): boolean {
  const raw = request.rawBody;
  if (!raw || raw.length === 0) {
    request.body = undefined;
    return true;
  }
  try {
    request.body = JSON.parse(raw.toString('utf8'));
  } catch {
    sendError(reply, reasonBody(400, 'Body is not valid JSON'));
    return false;
  }
  const bad = badBodyText(raw, request.body);
  if (bad) {
    sendError(reply, reasonBody(400, `${bad} ${BAD_TEXT}`));
    return false;
  }
  return true;
}

/** {@link parseBody} as a preValidation hook. */
export function parseJsonBody(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (parseBody(request, reply)) done();
}
