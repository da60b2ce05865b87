import type { FastifyReply, FastifyRequest } from 'fastify';
import { reasonBody, sendError } from './errors.ts';

/**
 * PostgreSQL cannot store U+0000 in text, nor a lone UTF-16 surrogate (JSON can carry both as
 * `\u0000`, `\ud800`): such a string reached the database and came back as a 500. Every string in a
 * request (body, path parameters, query) is checked before validation; the first bad one answers
 * 400 naming its place, as a schema error does (decision 0003).
 */
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const BAD = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const BAD_TEXT = 'must not contain U+0000 or an unpaired surrogate';

/** The path (`body/customer/name`) of the first string holding a bad character, or undefined. */
export function findBadText(value: unknown, at: string, depth = 0): string | undefined {
  if (typeof value === 'string') return BAD.test(value) ? at : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBadText(value[i], `${at}/${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    if (BAD.test(key)) return `${at}/${key.replace(BAD, '?')}`;
    const found = findBadText(v, `${at}/${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * A body can only hold such a string through a `\u` escape: a raw NUL is not valid JSON and raw
 * bytes of a surrogate decode to U+FFFD. So only bodies with an escape are walked.
 */
export function badBodyText(raw: Buffer, body: unknown): string | undefined {
  return raw.includes('\\u') ? findBadText(body, 'body') : undefined;
}

/** Root hook: path parameters and the query string. */
export function guardParamsAndQuery(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const bad = findBadText(req.params, 'params') ?? findBadText(req.query, 'querystring');
  if (bad) {
    sendError(reply, reasonBody(400, `${bad} ${BAD_TEXT}`));
    return;
  }
  done();
}
