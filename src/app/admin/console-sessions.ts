import {
  deleteIdleSessions,
  deleteSession,
  findLiveSession,
  insertSession,
  touchSession,
} from '../../db/repos/console-sessions.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import type { Services } from '../services.ts';
import { ADMIN_TOKEN_ACTOR, asActor, audit, authenticateOperator, type Actor } from './operators.ts';

/**
 * Console sign-ins (decision 0019). The cookie holds a random 32-byte id; the table keeps only its
 * SHA-256, so a copy of the database opens no session. A session ends after 12 h without a request,
 * at sign-out, as soon as its operator is disabled, or when the token it was opened with is no
 * longer that operator's: ADMIN_TOKEN changed, or the operator's token replaced (decision 0047). Times are the real clock's, not the sandbox
 * clock's: an operator moving the sandbox a day ahead must not sign everyone out.
 */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often, so browsing does not write on every request. */
const TOUCH_EVERY_MS = 60_000;

export interface ConsoleSession {
  actor: Omit<Actor, 'via'>;
  /**
   * A random secret of the session, never sent: the console's CSRF tokens are bound to it, so a
   * token is good for this session only (decision 0034).
   */
  csrfSecret: string;
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const random = (svc: Services) => Buffer.from(svc.randomBytes(32)).toString('base64url');

/** Opens a session for the holder of an operator token; undefined when the token opens nothing. */
export async function signIn(
  svc: Services,
  token: string,
  adminToken: string,
): Promise<{ sessionId: string; session: ConsoleSession } | undefined> {
  const actor = await authenticateOperator(svc, token, adminToken);
  if (!actor) return undefined;
  const sessionId = random(svc);
  const csrfSecret = random(svc);
  const at = new Date();
  await svc.db.transaction().execute(async (trx) => {
    await deleteIdleSessions(trx, new Date(at.getTime() - SESSION_IDLE_MS));
    await insertSession(trx, {
      idSha256: tokenHash(sessionId),
      actor: actor.id,
      actorName: actor.name,
      role: actor.role,
      csrfToken: csrfSecret,
      tokenSha256: tokenHash(token),
      at,
    });
    await asActor({ ...actor, via: 'console' }, () =>
      audit(trx, { action: 'console.sign_in', target: actor.id, at }),
    );
  });
  return { sessionId, session: { actor, csrfSecret } };
}

/**
 * The live session behind a cookie value, or undefined (unknown, idle 12 h, operator disabled, or
 * its token no longer the operator's).
 */
export async function sessionFor(
  svc: Services,
  sessionId: string | undefined,
  adminToken: string,
): Promise<ConsoleSession | undefined> {
  if (!sessionId || !SESSION_ID.test(sessionId)) return undefined;
  const idSha256 = tokenHash(sessionId);
  const now = Date.now();
  const row = await findLiveSession(svc.db, idSha256, new Date(now - SESSION_IDLE_MS));
  if (!row) return undefined;
  const tokenNow = row.actor === ADMIN_TOKEN_ACTOR.id ? tokenHash(adminToken) : row.operator_token_sha256;
  if (row.operator_disabled || row.token_sha256 === null || row.token_sha256 !== tokenNow) {
    await deleteSession(svc.db, idSha256);
    return undefined;
  }
  if (now - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) await touchSession(svc.db, idSha256, new Date(now));
  return {
    actor: { id: row.actor, name: row.actor_name || row.actor, role: row.role },
    csrfSecret: row.csrf_token,
  };
}

/** Ends a session (sign-out). */
export async function signOut(svc: Services, sessionId: string | undefined, actor: Omit<Actor, 'via'>) {
  if (!sessionId || !SESSION_ID.test(sessionId)) return;
  const at = new Date();
  await svc.db.transaction().execute(async (trx) => {
    if (await deleteSession(trx, tokenHash(sessionId))) {
      await asActor({ ...actor, via: 'console' }, () =>
        audit(trx, { action: 'console.sign_out', target: actor.id, at }),
      );
    }
  });
}
