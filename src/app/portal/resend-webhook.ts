import { resendOrderEvent } from '../deliver-webhook.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { ownedOrder } from './read-order.ts';
import type { PortalUser } from './roles.ts';

/** The operator's re-send of an order's event for its status, on an order of the user's partner. */
export async function resendWebhook(svc: Services, user: PortalUser, id: string) {
  await ownedOrder(svc, user, id);
  return resendOrderEvent(svc, portalActor(user), id);
}
