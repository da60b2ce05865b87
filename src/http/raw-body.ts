import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reasonBody, sendError } from './errors.ts';
import { BAD_TEXT, badBodyText } from './text-guard.ts';

export const BODY_LIMIT = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes exactly as received: what a partner's signature covers. */
    rawBody?: Buffer;
  }
}

/**
 * The bytes as JSON (undefined when there are none), or why they cannot be taken: not JSON, or
 * holding a string PostgreSQL cannot store (decision 0003).
 */
function readJson(raw: Buffer): { body: unknown; unreadable?: undefined } | { unreadable: string } {
  if (raw.length === 0) return { body: undefined };
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return { unreadable: 'Body is not valid JSON' };
  }
  const bad = badBodyText(raw, body);
  return bad ? { unreadable: `${bad} ${BAD_TEXT}` } : { body };
}

/**
 * Every scope's bodies, by Fastify's content-type parsing: whatever the Content-Type, at most
 * 64 KiB, parsed as JSON, or 400. A scope that takes forms adds their parser (the portal and the
 * console register @fastify/formbody); the partner API replaces these with {@link keepSignedBytes}.
 */
export function installJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (req: FastifyRequest, raw: Buffer, done: (err: Error | null, body?: unknown) => void) => {
    req.rawBody = raw;
    const read = readJson(raw);
    if (read.unreadable === undefined) done(null, read.body);
    else done(Object.assign(new Error(read.unreadable), { statusCode: 400 }));
  };
  addParser(app, parse);
}

/**
 * The partner API's bodies: the bytes are kept and not yet parsed, because the signature over them
 * is checked first (decision 0007): an unsigned body that is not JSON is 401 or 403, never 400.
 * {@link parseSignedBody} parses them once the signature holds.
 */
export function keepSignedBytes(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  addParser(app, (req, raw, done) => {
    req.rawBody = raw;
    done(null, undefined);
  });
}

function addParser(
  app: FastifyInstance,
  parse: (req: FastifyRequest, raw: Buffer, done: (err: Error | null, body?: unknown) => void) => void,
): void {
  // application/json named as well as the catch-all: Fastify remembers the parser it found for a
  // named type, but looks the catch-all up again (parsing the Content-Type) on every request.
  for (const type of ['application/json', '*'])
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, parse);
}

/** The kept bytes become `request.body`, or 400 when they are not JSON or hold a bad string. */
export function parseSignedBody(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const read = readJson(request.rawBody ?? EMPTY);
  if (read.unreadable !== undefined) {
    sendError(reply, reasonBody(400, read.unreadable));
    return;
  }
  request.body = read.body;
  done();
}

const EMPTY = Buffer.alloc(0);
