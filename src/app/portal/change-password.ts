import { badRequest } from '../../domain/errors.ts';
import { clearFailures, countAttempt } from '../../db/repos/portal-sign-in-failures.ts';
import { deleteOtherUserSessions } from '../../db/repos/portal-sessions.ts';
import { findUserForSignIn, setUserPassword } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { hashPassword, passwordProblem, verifyPassword } from './password.ts';
import type { PortalUser } from './roles.ts';
import { limitReached, type LimitedResult } from './sign-in.ts';

/**
 * `Change password` (decision 0086): the current password is required, and checked as a sign-in is
 * (counted before its hash, limited per address and email); the new one is judged as any new one.
 * Every other session of the user ends; the one it was changed in stays.
 */
export async function changePassword(
  svc: Services,
  user: PortalUser,
  input: { current: string; password: string; sessionId: string; address: string },
): Promise<{ ok: true } | LimitedResult> {
  const limits = svc.config.portalSignIn;
  const now = Date.now();
  const emailSha256 = tokenHash(user.email.toLowerCase());
  const refused = await countAttempt(svc.db, {
    address: input.address,
    emailSha256,
    since: new Date(now - limits.windowMs),
    perAddress: limits.perAddress,
    perEmail: limits.perEmail,
    at: new Date(now),
  });
  if (refused) return limitReached(limits, refused, now)!;
  const row = await findUserForSignIn(svc.db, user.email);
  const stored = row?.user_id === user.id ? row.password_hash : null;
  if (!(await verifyPassword(input.current, stored))) {
    throw badRequest('The current password is not right.');
  }
  await clearFailures(svc.db, input.address, emailSha256);
  const problem = await passwordProblem(input.password, [user.email]);
  if (problem) throw badRequest(problem);
  const hash = await hashPassword(svc, input.password);
  await svc.db.transaction().execute(async (trx) => {
    await setUserPassword(trx, user.id, hash);
    await deleteOtherUserSessions(trx, user.id, tokenHash(input.sessionId));
    await audit(trx, portalActor(user), {
      action: 'portal.change_password',
      target: user.partnerId,
      at: new Date(),
    });
  });
  return { ok: true };
}
