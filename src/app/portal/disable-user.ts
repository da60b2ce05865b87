import { badRequest, notFound } from '../../domain/errors.ts';
import { revokeInvitations } from '../../db/repos/portal-invitations.ts';
import { disableUser as disableUserRow } from '../../db/repos/users.ts';
import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';
import { endUserSessions } from './session.ts';

/**
 * An owner disables a user of its partner: its sessions end and its invitation links stop working at
 * once. The row stays, for the audit log's sake. An owner cannot disable itself (nobody might be left
 * to let anyone in); another partner's user is 404.
 */
export async function disableUser(svc: Services, user: PortalUser, id: string): Promise<void> {
  if (id === user.id) throw badRequest('You cannot disable yourself: ask another owner, or the operator.');
  const at = new Date(await svc.clock.now());
  const now = new Date();
  await svc.db.transaction().execute(async (trx) => {
    const row = await disableUserRow(trx, user.partnerId, id, now);
    if (!row) throw notFound('User not found, or disabled already');
    await revokeInvitations(trx, id, now);
    await endUserSessions(trx, id);
    await audit(trx, portalActor(user), {
      action: 'partner.disable_user',
      target: user.partnerId,
      before: { user_id: id, email: row.email, role: row.role, disabled: false },
      after: { user_id: id, email: row.email, role: row.role, disabled: true },
      at,
    });
  });
}
