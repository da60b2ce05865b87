import { changePartner } from '../admin/partners.ts';
import { resendEvent } from '../partner-events.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/**
 * Developers' `Resend` of one of the partner's events: resend-event's, on the user's partner (the
 * same event id and body, to the current URL).
 */
export async function resendPortalEvent(svc: Services, user: PortalUser, id: string) {
  const partner = await svc.partners.get(user.partnerId);
  return resendEvent(svc, { id: user.partnerId, webhook_url: partner?.webhook_url ?? null }, id);
}

/** The days before a policy's last day that its renewal notice comes (decision 0092); 0: none. */
export async function saveRenewalNotice(svc: Services, user: PortalUser, days: number): Promise<void> {
  await changePartner(svc, portalActor(user), user.partnerId, { renewal_notice_days: days });
}
