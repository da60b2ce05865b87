import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PortalSession } from '../app/portal/session.ts';
import { DomainError } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal session of the request (set by the portal's onRequest hook). */
    portalSession?: PortalSession;
  }
}

/** The signed-in user of a request behind the session check (every page but sign-in and invitations). */
export const userOf = (req: FastifyRequest) => req.portalSession!.user;

/** The HTTP status of a refusal, as the operator API answers it (http/errors.ts). */
export function statusOf(e: DomainError): number {
  switch (e.code) {
    case 'not_found':
    case 'vehicle_not_found':
      return 404;
    case 'forbidden':
      return 403;
    case 'conflict':
      return 409;
    default:
      return 400;
  }
}

/**
 * What a `?done=` after a redirect says: only these fixed sentences, looked up in a Map, so nothing
 * from the query string (not even `constructor`) reaches the page.
 */
export const NOTICES: ReadonlyMap<string, string> = new Map([
  ['signed-out', 'You are signed out.'],
  ['resend-delivered', 'The webhook was re-sent and delivered.'],
  ['resend-failed', 'The webhook was re-sent but not delivered: see the last attempt below.'],
  ['webhook-saved', 'The webhook settings are saved.'],
  ['retired', 'The old secret is retired: only the newest works now.'],
  ['disabled', 'The user is disabled, and signed out everywhere.'],
  ['paid', 'Paid from the wallet.'],
  ['payment-recorded', 'The payment is recorded.'],
]);

export const notice = (done: unknown): string | undefined =>
  typeof done === 'string' ? NOTICES.get(done) : undefined;

/** The refusal of a use case, or undefined when `e` is not one (then it is the error handler's). */
export const refusal = (e: unknown): { message: string; status: number } | undefined =>
  e instanceof DomainError ? { message: e.reason, status: statusOf(e) } : undefined;

/**
 * `act`, or, when a use case refuses it (a DomainError), what `refused` makes of the refusal: the
 * page again with the reason, at the status the operator API would answer. Any other error is the
 * error handler's.
 */
export async function unlessRefused(
  act: () => Promise<FastifyReply>,
  refused: (r: { message: string; status: number }) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  try {
    return await act();
  } catch (e) {
    const r = refusal(e);
    if (!r) throw e;
    return refused(r);
  }
}

/** '' (an empty form field) is no value. */
export const given = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === '' ? undefined : v.trim();

/** Whether the request came from htmx (a partial update). */
export const fromHtmx = (req: FastifyRequest): boolean => req.headers['hx-request'] === 'true';

export type Render = (
  req: FastifyRequest,
  reply: FastifyReply,
  view: string,
  data: Record<string, unknown>,
  status?: number,
) => Promise<FastifyReply>;

/** A query string of the given fields, the empty ones left out (links that keep a page's filters). */
export function queryOf(fields: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
