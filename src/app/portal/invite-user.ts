import { badRequest, conflict, notFound } from '../../domain/errors.ts';
import { partnerExists } from '../../db/repos/partners.ts';
import { insertInvitation, revokeInvitations } from '../../db/repos/portal-invitations.ts';
import { findUserByEmail, insertUser, reopenUser, setUserRole } from '../../db/repos/users.ts';
import type { PortalRole } from '../../db/schema.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit, type Actor } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { PORTAL_ROLES, type PortalUser } from './roles.ts';

/** How long an invitation link works, by the real clock (decision 0037). */
export const INVITATION_MS = 72 * 3_600_000;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface Invitation {
  id: string;
  email: string;
  role: PortalRole;
  invitation_url: string;
}

/**
 * Invites a person to a partner's portal with a role: a user without a password, and a link valid
 * 72 h and once that sets it. The link is in the answer only: never stored (only its SHA-256), never
 * logged, never in the audit entry. Inviting again an address of the same partner that has not set
 * its password yet replaces its link and role; the operator (not an owner) may so invite again a
 * disabled user of the partner. An address another partner's user holds is invited exactly as a new
 * one, so an owner learns nothing of other partners' users; that link simply cannot be accepted
 * (decision 0086). An address of an enabled user of the same partner is refused: the Team page shows
 * it anyway.
 */
export async function inviteUser(
  svc: Services,
  actor: Actor,
  partnerId: string,
  input: { email: string; role: string },
): Promise<Invitation> {
  const email = input.email.trim();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw badRequest('email must be an address like name@example.com');
  }
  const role = PORTAL_ROLES.find((r) => r === input.role);
  if (!role) throw badRequest(`role must be one of: ${PORTAL_ROLES.join(', ')}`);
  const token = Buffer.from(svc.randomBytes(32)).toString('base64url');
  const at = new Date(await svc.clock.now());
  const now = new Date();
  const id = await svc.db
    .transaction()
    .execute(async (trx) => {
      if (!(await partnerExists(trx, partnerId))) throw notFound('Partner not found');
      const existing = await findUserByEmail(trx, email, { forUpdate: true, partnerId });
      let userId: string;
      if (existing) {
        const pending = existing.password_hash === null && !existing.disabled_at;
        const reopen = existing.disabled_at !== null && actor.kind === 'operator';
        if (!pending && !reopen) throw conflict(`A portal user with the email ${email} exists already`);
        userId = existing.id;
        await revokeInvitations(trx, userId, now);
        if (reopen) await reopenUser(trx, userId, role);
        else await setUserRole(trx, userId, role);
      } else {
        userId = `usr_${Buffer.from(svc.randomBytes(8)).toString('hex')}`;
        await insertUser(trx, { id: userId, partner_id: partnerId, email, role, created_at: at });
      }
      await insertInvitation(trx, {
        token_sha256: tokenHash(token),
        user_id: userId,
        created_at: now,
        expires_at: new Date(now.getTime() + INVITATION_MS),
      });
      await audit(trx, actor, {
        action: 'partner.invite_user',
        target: partnerId,
        after: { user_id: userId, email, role, again: existing !== undefined },
        at,
      });
      return userId;
    })
    .catch((err: unknown) => {
      // Two invitations of one new address at once: the unique index lets one through.
      if ((err as { code?: string }).code === '23505') {
        throw conflict(`A portal user with the email ${email} exists already`);
      }
      throw err;
    });
  return { id, email, role, invitation_url: `${svc.config.publicBaseUrl}/portal/invitations/${token}` };
}

/** An owner invites a colleague to its own partner (Team). */
export async function inviteTeamUser(
  svc: Services,
  user: PortalUser,
  input: { email: string; role: string },
): Promise<Invitation> {
  return inviteUser(svc, portalActor(user), user.partnerId, input);
}
