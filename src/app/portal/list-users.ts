import { isoLocal } from '../../domain/time.ts';
import { openInvitationEnds } from '../../db/repos/portal-invitations.ts';
import { listPartnerUsers } from '../../db/repos/users.ts';
import type { Services } from '../services.ts';
import type { PortalUser } from './roles.ts';

/** The partner's users, oldest first, each with its state: active, invited (until when), or disabled. */
export async function listUsers(svc: Services, user: PortalUser) {
  const rows = await listPartnerUsers(svc.db, user.partnerId);
  const pending = rows.filter((r) => r.password_hash === null && !r.disabled_at).map((r) => r.id);
  const ends = await openInvitationEnds(svc.db, pending, new Date());
  return rows.map((r) => {
    const until = ends.get(r.id);
    return {
      id: r.id,
      email: r.email,
      role: r.role,
      state: r.disabled_at
        ? ('disabled' as const)
        : r.password_hash !== null
          ? ('active' as const)
          : until
            ? ('invited' as const)
            : ('invitation expired' as const),
      invited_until: until ? isoLocal(until.getTime()) : null,
      created_at: isoLocal(r.created_at.getTime()),
      you: r.id === user.id,
    };
  });
}
