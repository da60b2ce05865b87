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

/**
 * The path (`body/customer/name`) of the first string or key holding a bad character, or undefined.
 * Walked with a stack of its own, at any depth: a recursion stopped at some depth let a NUL nested
 * deeper through (decision 0003), and one without a stop would overflow on a 64 KiB body of `[[[…`.
 */
export function findBadText(value: unknown, at: string): string | undefined {
  const stack: [unknown, string][] = [[value, at]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (BAD.test(v)) return path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    // Pushed last first, so the first bad one in document order is found first.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (BAD.test(key)) stack.push([key, `${path}/${key.replace(new RegExp(BAD.source, 'g'), '?')}`]);
      else stack.push([child, `${path}/${key}`]);
    }
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

/** Path parameters and the query string: a root hook, and a step of the partner API's pipeline. */
export function guardParamsAndQuery(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const bad = findBadText(req.params, 'params') ?? findBadText(req.query, 'querystring');
  if (bad) {
    sendError(reply, reasonBody(400, `${bad} ${BAD_TEXT}`));
    return;
  }
  done();
}
