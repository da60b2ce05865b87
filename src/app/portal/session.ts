import type { Transaction } from 'kysely';
import {
  deleteUserSessions,
  findLivePortalSession,
  insertPortalSession,
} from '../../db/repos/portal-sessions.ts';
import { deleteIdleSessions, deleteSession } from '../../db/repos/sessions.ts';
import type { DB } from '../../db/schema.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { liveSession, randomId, SESSION_IDLE_MS, sessionKey } from '../browser-sessions.ts';
import type { Services } from '../services.ts';
import { portalUserOf, type PortalUser } from './roles.ts';

/**
 * Portal sessions, as the console's (decisions 0019 and 0037, browser-sessions.ts): they also end at
 * once when the user or its partner is disabled.
 */
export interface PortalSession {
  user: PortalUser;
  /** What the session's CSRF tokens are made from (@fastify/csrf-protection's secret). */
  csrfSecret: string;
}

/** Opens a session for `user` in the caller's transaction; answers the cookie's value. */
export async function openSession(
  svc: Services,
  trx: Transaction<DB>,
  user: PortalUser,
): Promise<{ sessionId: string; session: PortalSession }> {
  const sessionId = randomId(svc, 32);
  const csrfSecret = randomId(svc, 18);
  const at = new Date();
  await deleteIdleSessions(trx, 'portal_sessions', new Date(at.getTime() - SESSION_IDLE_MS));
  await insertPortalSession(trx, {
    id_sha256: tokenHash(sessionId),
    user_id: user.id,
    csrf_secret: csrfSecret,
    created_at: at,
    last_seen_at: at,
  });
  return { sessionId, session: { user, csrfSecret } };
}

/** A session ends as soon as its user or the user's partner is disabled. */
const holderDisabled = (r: { disabled_at: Date | null; partner_disabled: boolean }) =>
  r.disabled_at !== null || r.partner_disabled;

/** The live session behind a cookie value, or undefined (unknown, idle 12 h, user or partner disabled). */
export async function portalSessionFor(
  svc: Services,
  sessionId: string | undefined,
): Promise<PortalSession | undefined> {
  const row = await liveSession(svc, 'portal_sessions', sessionId, findLivePortalSession, holderDisabled);
  if (!row) return undefined;
  return { user: portalUserOf(row), csrfSecret: row.csrf_secret };
}

/** Ends a session; true when there was one. */
export async function endSession(trx: Transaction<DB>, sessionId: string | undefined): Promise<boolean> {
  const idSha256 = sessionKey(sessionId);
  return idSha256 ? deleteSession(trx, 'portal_sessions', idSha256) : false;
}

/** Ends every session of a user, in the caller's transaction (the user was disabled). */
export const endUserSessions = (trx: Transaction<DB>, userId: string) => deleteUserSessions(trx, userId);
