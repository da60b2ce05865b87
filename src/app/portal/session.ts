import type { Transaction } from 'kysely';
import {
  deleteIdlePortalSessions,
  deletePortalSession,
  deleteUserSessions,
  findLivePortalSession,
  insertPortalSession,
  touchPortalSession,
} from '../../db/repos/portal-sessions.ts';
import type { DB } from '../../db/schema.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import type { Services } from '../services.ts';
import { portalUserOf, type PortalUser } from './roles.ts';

/**
 * Portal sessions, as the console's (decisions 0019 and 0037): the cookie holds a random 32-byte id,
 * the table its SHA-256 and the secret its CSRF tokens are checked against. A session ends after 12 h
 * without a request (real time, not the sandbox clock), at sign-out, and at once when its user or its
 * partner is disabled.
 */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often, so browsing does not write on every request. */
const TOUCH_EVERY_MS = 60_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface PortalSession {
  user: PortalUser;
  /** What the session's CSRF tokens are made from (@fastify/csrf-protection's secret). */
  csrfSecret: string;
}

const random = (svc: Services, n: number) => Buffer.from(svc.randomBytes(n)).toString('base64url');

/** Opens a session for `user` in the caller's transaction; answers the cookie's value. */
export async function openSession(
  svc: Services,
  trx: Transaction<DB>,
  user: PortalUser,
): Promise<{ sessionId: string; session: PortalSession }> {
  const sessionId = random(svc, 32);
  const csrfSecret = random(svc, 18);
  const at = new Date();
  await deleteIdlePortalSessions(trx, new Date(at.getTime() - SESSION_IDLE_MS));
  await insertPortalSession(trx, { idSha256: tokenHash(sessionId), userId: user.id, csrfSecret, at });
  return { sessionId, session: { user, csrfSecret } };
}

/** The live session behind a cookie value, or undefined (unknown, idle 12 h, user or partner disabled). */
export async function portalSessionFor(
  svc: Services,
  sessionId: string | undefined,
): Promise<PortalSession | undefined> {
  if (!sessionId || !SESSION_ID.test(sessionId)) return undefined;
  const idSha256 = tokenHash(sessionId);
  const now = Date.now();
  const row = await findLivePortalSession(svc.db, idSha256, new Date(now - SESSION_IDLE_MS));
  if (!row) return undefined;
  if (row.disabled_at || row.partner_disabled) {
    await deletePortalSession(svc.db, idSha256);
    return undefined;
  }
  if (now - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
    await touchPortalSession(svc.db, idSha256, new Date(now));
  }
  return { user: portalUserOf(row), csrfSecret: row.csrf_secret };
}

/** Ends a session; true when there was one. */
export async function endSession(trx: Transaction<DB>, sessionId: string | undefined): Promise<boolean> {
  if (!sessionId || !SESSION_ID.test(sessionId)) return false;
  return deletePortalSession(trx, tokenHash(sessionId));
}

/** Ends every session of a user, in the caller's transaction (the user was disabled). */
export const endUserSessions = (trx: Transaction<DB>, userId: string) => deleteUserSessions(trx, userId);
