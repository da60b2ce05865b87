import { deleteSession, touchSession, type SessionTable } from '../db/repos/sessions.ts';
import { tokenHash } from '../secrets/secret-box.ts';
import type { Services } from './services.ts';

/**
 * What the console's and the portal's sign-ins share (decisions 0019 and 0037): the cookie holds a
 * random 32-byte id and the table only its SHA-256, so a copy of the database opens no session. A
 * session ends after 12 h without a request, at sign-out, or as soon as whoever it is for is disabled.
 * Times are the real clock's, not the sandbox clock's: moving the sandbox a day ahead must not sign
 * everyone out.
 */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often, so browsing does not write on every request. */
const TOUCH_EVERY_MS = 60_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** `n` random bytes as base64url: a session id (32 bytes) or a CSRF secret. */
export const randomId = (svc: Services, n: number) => Buffer.from(svc.randomBytes(n)).toString('base64url');

/** The SHA-256 a cookie value is stored as, or undefined when the value cannot be a session id. */
export const sessionKey = (sessionId: string | undefined): string | undefined =>
  sessionId && SESSION_ID.test(sessionId) ? tokenHash(sessionId) : undefined;

/**
 * The live session row behind a cookie value: `find` (the table's repository) reads it, seen since
 * the idle limit; a session whose holder has `ended` is deleted and is none; one not seen for a
 * minute is marked seen.
 */
export async function liveSession<R extends { last_seen_at: Date }>(
  svc: Services,
  table: SessionTable,
  sessionId: string | undefined,
  find: (db: Services['db'], idSha256: string, idleSince: Date) => Promise<R | undefined>,
  ended: (row: R) => boolean,
): Promise<R | undefined> {
  const idSha256 = sessionKey(sessionId);
  if (!idSha256) return undefined;
  const now = Date.now();
  const row = await find(svc.db, idSha256, new Date(now - SESSION_IDLE_MS));
  if (!row) return undefined;
  if (ended(row)) {
    await deleteSession(svc.db, table, idSha256);
    return undefined;
  }
  if (now - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
    await touchSession(svc.db, table, idSha256, new Date(now));
  }
  return row;
}
