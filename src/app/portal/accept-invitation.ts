import { badRequest, notFound } from '../../domain/errors.ts';
import { findOpenInvitation, markInvitationUsed } from '../../db/repos/portal-invitations.ts';
import { setUserPassword } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit } from '../admin/operators.ts';
import type { Services } from '../services.ts';
import { asUser } from './actor.ts';
import { hashPassword, passwordProblem } from './password.ts';
import { INVALID_INVITATION } from './read-invitation.ts';
import { portalUserOf } from './roles.ts';
import { openSession } from './session.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Accepts an invitation: sets the user's password (decision 0038), uses the link up, and signs the
 * user in. A refused password changes nothing and leaves the link usable; a link that opens nothing
 * is 404 whatever the reason.
 */
export async function acceptInvitation(svc: Services, token: string, password: string) {
  if (!TOKEN.test(token)) throw notFound(INVALID_INVITATION);
  const problem = passwordProblem(password);
  if (problem) throw badRequest(problem);
  // Hashed before the transaction, which then holds its connection only for the writes.
  const hash = await hashPassword(svc, password);
  const now = new Date();
  return svc.db.transaction().execute(async (trx) => {
    const found = await findOpenInvitation(trx, tokenHash(token), now, { forUpdate: true });
    if (!found || found.disabled_at || found.partner_disabled) throw notFound(INVALID_INVITATION);
    await setUserPassword(trx, found.user_id, hash);
    await markInvitationUsed(trx, found.token_sha256, now);
    const user = portalUserOf(found);
    const opened = await openSession(svc, trx, user);
    await asUser(user, () =>
      audit(trx, {
        action: 'portal.accept_invitation',
        target: user.partnerId,
        after: { user_id: user.id, role: user.role },
        at: now,
      }),
    );
    return opened;
  });
}
