import { rotateSecret as rotatePartnerSecret } from '../admin/partners.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/**
 * A new secret for the user's partner, shown once: the operator's rotation (decision 0040), so the
 * previous secret works until retired or for 24 h.
 */
export async function rotateSecret(svc: Services, user: PortalUser): Promise<{ secret: string }> {
  return rotatePartnerSecret(svc, portalActor(user), user.partnerId);
}
