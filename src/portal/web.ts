import type { FastifyRequest } from 'fastify';
import type { PortalSession } from '../app/portal/session.ts';

// The page plumbing both surfaces share, beside what is this surface's own.
export * from '../http/pages.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal session of the request (set by the portal's onRequest hook). */
    portalSession?: PortalSession;
  }
}

/** The signed-in user of a request behind the session check (every page but sign-in and invitations). */
export const userOf = (req: FastifyRequest) => req.portalSession!.user;

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
  ['timestamped-required', 'Requests must now carry X-Polita-Signature: X-Hmac-Signature alone is refused.'],
  ['timestamped-optional', 'X-Hmac-Signature alone is accepted again.'],
  ['disabled', 'The user is disabled, and signed out everywhere.'],
  ['password-changed', 'Your password is changed; your other sessions have ended.'],
  ['paid', 'Paid from the wallet.'],
  ['payment-recorded', 'The payment is recorded.'],
]);

export const notice = (done: unknown): string | undefined =>
  typeof done === 'string' ? NOTICES.get(done) : undefined;
