import { asActor, portalActorId, type PortalActor } from '../admin/operators.ts';
import type { PortalUser } from './roles.ts';

/** The audit log's actor of a portal user: the user and its partner (decision 0037). */
export const actorOf = (user: PortalUser): PortalActor => ({
  id: portalActorId(user.partnerId, user.email),
  name: user.email,
  role: user.role,
  via: 'portal',
  userId: user.id,
  partnerId: user.partnerId,
});

/** Runs `fn` as the portal user, so the audit entries its use cases write name the user and partner. */
export const asUser = <T>(user: PortalUser, fn: () => T): T => asActor(actorOf(user), fn);
