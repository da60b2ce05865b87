import { badRequest } from '../../domain/errors.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/order-state.ts';
import { changePartner } from '../admin/partners.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/**
 * The partner's webhook URL (empty: none) and the events it receives beside `completed`, which is
 * always sent. The operator's change, with the same URL rule (decision 0016).
 */
export async function saveWebhook(
  svc: Services,
  user: PortalUser,
  input: { url: string; events: readonly string[] },
): Promise<void> {
  const url = input.url.trim();
  if (url.length > 2000) throw badRequest('The webhook URL is longer than 2000 characters');
  const events = WEBHOOK_EVENT_TYPES.filter((s) => s === 'completed' || input.events.includes(s));
  await changePartner(svc, portalActor(user), user.partnerId, {
    webhook_url: url || null,
    webhook_events: events,
  });
}
