import { findLiveSession, insertSession } from '../../db/repos/console-sessions.ts';
import { deleteIdleSessions, deleteSession } from '../../db/repos/sessions.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { liveSession, randomId, SESSION_IDLE_MS, sessionKey } from '../browser-sessions.ts';
import type { Services } from '../services.ts';
import { audit, operatorActor, type OperatorActor } from '../actor.ts';
import { ADMIN_TOKEN_ACTOR, authenticateOperator } from './operators.ts';

/**
 * Console sign-ins (decision 0019), on the sessions the portal's are also made of
 * (browser-sessions.ts). A session also ends when the token it was opened with is no longer that
 * operator's: ADMIN_TOKEN changed, or the operator's token replaced (decision 0047).
 */
export interface ConsoleSession {
  /** The signed-in operator, acting through the console. */
  actor: OperatorActor;
  /**
   * A random secret of the session, never sent: the console's CSRF tokens are bound to it, so a
   * token is good for this session only (decision 0034).
   */
  csrfSecret: string;
}

/** Opens a session for the holder of an operator token; undefined when the token opens nothing. */
export async function signIn(
  svc: Services,
  token: string,
  adminToken: string,
): Promise<{ sessionId: string; session: ConsoleSession } | undefined> {
  const operator = await authenticateOperator(svc, token, adminToken);
  if (!operator) return undefined;
  const actor = operatorActor(operator, 'console');
  const sessionId = randomId(svc, 32);
  const csrfSecret = randomId(svc, 32);
  const at = new Date();
  await svc.db.transaction().execute(async (trx) => {
    await deleteIdleSessions(trx, 'console_sessions', new Date(at.getTime() - SESSION_IDLE_MS));
    await insertSession(trx, {
      idSha256: tokenHash(sessionId),
      actor: actor.id,
      actorName: actor.name,
      role: actor.role,
      csrfToken: csrfSecret,
      tokenSha256: tokenHash(token),
      at,
    });
    await audit(trx, actor, { action: 'console.sign_in', target: actor.id, at });
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
  const row = await liveSession(
    svc,
    'console_sessions',
    sessionId,
    findLiveSession,
    (r) =>
      r.operator_disabled ||
      r.token_sha256 === null ||
      r.token_sha256 !== (r.actor === ADMIN_TOKEN_ACTOR.id ? tokenHash(adminToken) : r.operator_token_sha256),
  );
  if (!row) return undefined;
  return {
    actor: operatorActor({ id: row.actor, name: row.actor_name || row.actor, role: row.role }, 'console'),
    csrfSecret: row.csrf_token,
  };
}

/** Ends a session (sign-out). */
export async function signOut(svc: Services, sessionId: string | undefined, actor: OperatorActor) {
  const idSha256 = sessionKey(sessionId);
  if (!idSha256) return;
  const at = new Date();
  await svc.db.transaction().execute(async (trx) => {
    if (await deleteSession(trx, 'console_sessions', idSha256)) {
      await audit(trx, actor, { action: 'console.sign_out', target: actor.id, at });
    }
  });
}
