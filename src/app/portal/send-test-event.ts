import { sendTestEvent as sendPartnerTestEvent, type DeliveryResult } from '../deliver-webhook.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/** A signed test event to the partner's webhook URL, now: the operator's, on the user's partner. */
export async function sendTestEvent(svc: Services, user: PortalUser): Promise<DeliveryResult> {
  return sendPartnerTestEvent(svc, portalActor(user), user.partnerId);
}
