import { notFound } from '../../domain/errors.ts';
import { insertInvitation, revokeInvitations } from '../../db/repos/portal-invitations.ts';
import { listPartnerUsers } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit, type Actor } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { INVITATION_MS, type Invitation } from './invite-user.ts';
import type { PortalUser } from './roles.ts';

/**
 * A new set-password link for a user of the partner (decision 0086): a forgotten password is reset by
 * an owner (Team) or the operator, who hands the link over as an invitation's. It works once, for
 * 72 h, replaces the user's earlier links, and, when used, sets the password, ending the user's
 * sessions: the old password stops working then, not before (a link nobody uses locks nobody out).
 * A disabled user gets none (the operator invites a disabled user again instead).
 */
export async function passwordLink(
  svc: Services,
  actor: Actor,
  partnerId: string,
  userId: string,
): Promise<Invitation> {
  const users = await listPartnerUsers(svc.db, partnerId);
  const user = users.find((u) => u.id === userId && !u.disabled_at);
  if (!user) throw notFound('User not found, or disabled');
  const token = Buffer.from(svc.randomBytes(32)).toString('base64url');
  const now = new Date();
  const at = new Date(await svc.clock.now());
  await svc.db.transaction().execute(async (trx) => {
    await revokeInvitations(trx, user.id, now);
    await insertInvitation(trx, {
      token_sha256: tokenHash(token),
      user_id: user.id,
      created_at: now,
      expires_at: new Date(now.getTime() + INVITATION_MS),
    });
    await audit(trx, actor, {
      action: 'partner.password_link',
      target: partnerId,
      after: { user_id: user.id, email: user.email },
      at,
    });
  });
  return {
    id: user.id,
    email: user.email,
    role: user.role,
    invitation_url: `${svc.config.publicBaseUrl}/portal/invitations/${token}`,
  };
}

/** The operator's console names the user by email: the partner's user with that address. */
export async function passwordLinkByEmail(
  svc: Services,
  actor: Actor,
  partnerId: string,
  email: string,
): Promise<Invitation> {
  const wanted = email.trim().toLowerCase();
  const user = (await listPartnerUsers(svc.db, partnerId)).find((u) => u.email.toLowerCase() === wanted);
  if (!user) throw notFound('User not found, or disabled');
  return passwordLink(svc, actor, partnerId, user.id);
}

/** An owner sends a colleague (or itself) a new set-password link (Team). */
export async function teamPasswordLink(svc: Services, owner: PortalUser, userId: string) {
  return passwordLink(svc, portalActor(owner), owner.partnerId, userId);
}
