import { retireOldSecrets } from '../admin/partners.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/** Retires the previous secret of the user's partner now, before its 24 h are up. */
export async function retireSecret(svc: Services, user: PortalUser): Promise<{ retired: number }> {
  return retireOldSecrets(svc, portalActor(user), user.partnerId);
}
