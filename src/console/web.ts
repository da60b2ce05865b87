import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleSession } from '../app/admin/console-sessions.ts';
import { forbidden } from '../domain/errors.ts';
import { operatorMayWrite, ROLE_SCOPE, type OperatorWrite } from '../http/operator-roles.ts';
import { fromHtmx, unlessRefused } from '../http/pages.ts';

// The page plumbing both surfaces share, beside what is this surface's own.
export * from '../http/pages.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of the request (set by the console's onRequest hook). */
    consoleSession?: ConsoleSession;
  }
}

/**
 * What a `?done=` after a redirect says. Only these fixed sentences: nothing from the query string
 * reaches the page, and a value that is no key here (`constructor`, `__proto__`) says nothing.
 */
const NOTICES = new Map<string, string>([
  ['refunded', 'The order is refunded.'],
  ['resend-delivered', 'The webhook was re-sent and delivered.'],
  ['resend-failed', 'The webhook was re-sent but not delivered: see the last attempt below.'],
  ['credited', 'The wallet is credited.'],
  ['credit-repeated', 'A credit with this reference was already booked: nothing changed.'],
  ['webhook-saved', 'The webhook settings are saved.'],
  ['disabled', 'The partner is disabled: its requests are refused.'],
  ['enabled', 'The partner is enabled again.'],
  [
    'timestamped-required',
    'Timestamped signatures are required: X-Hmac-Signature alone is refused with 401.',
  ],
  ['timestamped-optional', 'X-Hmac-Signature alone is accepted again (the original contract’s form).'],
  ['test-delivered', 'The test event was delivered.'],
  ['test-failed', 'The test event was not delivered.'],
  ['retired', 'The old secrets are retired: only the newest works now.'],
  ['settings-saved', 'The settings are saved.'],
  ['clock-set', 'The sandbox clock is set.'],
  ['clock-reset', 'The sandbox clock follows real time again.'],
  ['signed-out', 'You are signed out.'],
]);

/** The notice a `?done=` value names, or undefined. */
export const noticeOf = (done: string): string | undefined => NOTICES.get(done);

/** The signed-in operator, whom every console action hands its use case. */
export const by = (req: FastifyRequest) => req.consoleSession!.actor;

/**
 * Refuses a state-changing console action to a role the operator API refuses its equivalent, the
 * operator route `write` (OPERATOR_WRITES, one table for both): the refusal says what it cannot do.
 */
export function requireRole(req: FastifyRequest, write: OperatorWrite, what: string): void {
  const { role } = req.consoleSession!.actor;
  if (!operatorMayWrite(role, write)) {
    throw forbidden(`The ${role} role cannot ${what}: ${ROLE_SCOPE[role]}. Ask an admin.`);
  }
}

/**
 * A state-changing form: the role check (a role may do what it may do through the operator API's
 * route `as.write`), the use case, which names the notice it earned, then the page again with
 * that notice (htmx swaps it in place) or a redirect to it with `?done=`. A refusal shows the page
 * with the reason, at the operator API's status, and what the form should keep.
 */
export async function act(
  req: FastifyRequest,
  reply: FastifyReply,
  o: {
    as: { write: OperatorWrite; what: string };
    run: () => Promise<string>;
    page: string;
    show: (extra: Record<string, unknown>, status?: number) => Promise<FastifyReply>;
    kept?: Record<string, unknown>;
  },
): Promise<FastifyReply> {
  return unlessRefused(
    async () => {
      requireRole(req, o.as.write, o.as.what);
      const done = await o.run();
      if (fromHtmx(req)) return o.show({ notice: noticeOf(done) });
      return reply.redirect(`${o.page}?done=${done}`, 303);
    },
    (r) => o.show({ error: r.message, ...o.kept }, r.status),
  );
}
