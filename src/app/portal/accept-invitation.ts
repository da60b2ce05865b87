import { badRequest, notFound } from '../../domain/errors.ts';
import { findOpenInvitation, markInvitationUsed } from '../../db/repos/portal-invitations.ts';
import { clearFailures, countAttempt } from '../../db/repos/portal-sign-in-failures.ts';
import { emailHeldElsewhere, setUserPassword } from '../../db/repos/users.ts';
import { isUniqueViolation } from '../create-order.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { hashPassword, passwordProblem } from './password.ts';
import { INVALID_INVITATION } from './read-invitation.ts';
import { portalUserOf } from './roles.ts';
import { endUserSessions, openSession, type PortalSession } from './session.ts';
import { limitReached, type LimitedResult } from './sign-in.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The key invitation attempts are counted under, beside an address's sign-ins (decision 0085). */
const INVITATION_ATTEMPTS = tokenHash('portal-invitation-attempts');

/**
 * Accepts an invitation: sets the user's password (decision 0038), uses the link up, and signs the
 * user in. A refused password changes nothing and leaves the link usable; a link that opens nothing
 * is 404 whatever the reason. Attempts are limited per client address as sign-ins are, and counted
 * before anything else; the link is looked up before the password is hashed, so a made-up token costs
 * no hash (decision 0085): a token of 256 random bits is not guessed, so its timing tells nothing.
 */
export async function acceptInvitation(
  svc: Services,
  input: { token: string; password: string; address: string },
): Promise<{ ok: true; sessionId: string; session: PortalSession } | LimitedResult> {
  const { token, password } = input;
  const limits = svc.config.portalSignIn;
  const started = Date.now();
  const since = new Date(started - limits.windowMs);
  const refused = await countAttempt(svc.db, {
    address: input.address,
    emailSha256: INVITATION_ATTEMPTS,
    since,
    perAddress: limits.perAddress,
    perEmail: limits.perAddress,
    at: new Date(started),
  });
  if (refused) return limitReached(limits, refused, started)!;
  if (!TOKEN.test(token)) throw notFound(INVALID_INVITATION);
  const open = await findOpenInvitation(svc.db, tokenHash(token), new Date());
  if (!open || open.disabled_at || open.partner_disabled) throw notFound(INVALID_INVITATION);
  // Another partner's user holds the address: this link was answered as any other, and opens nothing.
  if (await emailHeldElsewhere(svc.db, open.email, open.user_id)) throw notFound(INVALID_INVITATION);
  const problem = await passwordProblem(password, [open.email]);
  if (problem) throw badRequest(problem);
  // Hashed before the transaction, which then holds its connection only for the writes.
  const hash = await hashPassword(svc, password);
  const now = new Date();
  const opened = await svc.db.transaction().execute(async (trx) => {
    const found = await findOpenInvitation(trx, tokenHash(token), now, { forUpdate: true });
    if (!found || found.disabled_at || found.partner_disabled) throw notFound(INVALID_INVITATION);
    await setUserPassword(trx, found.user_id, hash).catch((err: unknown) => {
      // Another invitation of the address was accepted meanwhile (the unique index, migration 19).
      throw isUniqueViolation(err) ? notFound(INVALID_INVITATION) : err;
    });
    await markInvitationUsed(trx, found.token_sha256, now);
    // A set-password link of a user who had one: its sessions end with the old password.
    await endUserSessions(trx, found.user_id);
    const user = portalUserOf(found);
    const opened = await openSession(svc, trx, user);
    await audit(trx, portalActor(user), {
      action: 'portal.accept_invitation',
      target: user.partnerId,
      after: { user_id: user.id, role: user.role },
      at: now,
    });
    return opened;
  });
  await clearFailures(svc.db, input.address, INVITATION_ATTEMPTS);
  return { ok: true, ...opened };
}
