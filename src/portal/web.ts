import type { FastifyRequest } from 'fastify';
import type { PortalSession } from '../app/portal/session.ts';
import { DEFAULT_LANGUAGE, translator, type Language, type T } from './i18n.ts';

// The page plumbing both surfaces share, beside what is this surface's own.
export * from '../http/pages.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal session of the request (set by the portal's onRequest hook). */
    portalSession?: PortalSession;
    /** The page's language: the user's choice, else Accept-Language's (set by the onRequest hook). */
    portalLanguage?: Language;
  }
}

/** The catalogue's messages in the request's language. */
export const tOf = (req: FastifyRequest): T => translator(req.portalLanguage ?? DEFAULT_LANGUAGE);

/** The signed-in user of a request behind the session check (every page but sign-in and invitations). */
export const userOf = (req: FastifyRequest) => req.portalSession!.user;

/**
 * What a `?done=` after a redirect says: the catalogue key of one of these fixed sentences, looked up
 * in a Map, so nothing from the query string (not even `constructor`) reaches the page.
 */
export const NOTICES: ReadonlyMap<string, string> = new Map(
  [
    'signed-out',
    'resend-delivered',
    'resend-failed',
    'webhook-saved',
    'retired',
    'timestamped-required',
    'timestamped-optional',
    'disabled',
    'paid',
    'payment-recorded',
    'language-saved',
    'cancelled',
    'corrected',
    'renewals-saved',
    'event-queued',
    'password-changed',
  ].map((done) => [done, `notice.${done}`]),
);

/** The catalogue key of a `?done=`'s notice, or undefined. */
export const notice = (done: unknown): string | undefined =>
  typeof done === 'string' ? NOTICES.get(done) : undefined;
