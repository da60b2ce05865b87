import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';
import { endSession } from './session.ts';

/** Ends the session behind the cookie (sign-out), with an audit entry when there was one. */
export async function signOut(svc: Services, sessionId: string | undefined, user: PortalUser): Promise<void> {
  await svc.db.transaction().execute(async (trx) => {
    if (await endSession(trx, sessionId)) {
      await audit(trx, portalActor(user), {
        action: 'portal.sign_out',
        target: user.partnerId,
        at: new Date(),
      });
    }
  });
}
