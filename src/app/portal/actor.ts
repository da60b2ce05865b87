import { portalActorId, type PortalActor } from '../actor.ts';
import type { PortalUser } from './roles.ts';

/** The portal user as the actor of its use cases: the user and its partner (decision 0037). */
export const portalActor = (user: PortalUser): PortalActor => ({
  kind: 'portal',
  id: portalActorId(user.partnerId, user.email),
  name: user.email,
  role: user.role,
  via: 'portal',
  userId: user.id,
  partnerId: user.partnerId,
});
