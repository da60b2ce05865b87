import { notFound } from '../../domain/errors.ts';
import { isoLocal } from '../../domain/time.ts';
import { findPartner } from '../../db/repos/partners.ts';
import { recentDeliveries } from '../../db/repos/portal-deliveries.ts';
import type { Services } from '../services.ts';
import { requireArea, type PortalUser } from './roles.ts';

/** How many deliveries Developers lists. */
export const DELIVERIES = 100;

/**
 * What Developers shows: the partner id, its secrets' state (how many are valid, and until when the
 * previous one works after a rotation), the webhook URL and events, and the last deliveries.
 */
export async function readDevelopers(svc: Services, user: PortalUser) {
  requireArea(user, 'developers');
  const partner = await findPartner(svc.db, user.partnerId);
  if (!partner) throw notFound('Partner not found');
  const deliveries = await recentDeliveries(svc.db, user.partnerId, DELIVERIES);
  return {
    partner_id: partner.id,
    valid_secrets: partner.secrets.length,
    // The previous secret's end, by the real clock (decision 0040).
    previous_secret_until: partner.secretsChangeAt ? isoLocal(partner.secretsChangeAt.getTime()) : null,
    require_timestamped_signature: partner.require_timestamped_signature,
    webhook_url: partner.webhook_url,
    webhook_events: partner.webhook_events,
    deliveries: deliveries.map((d) => ({
      order_id: d.order_id,
      event_id: d.event_id,
      event: d.event_status,
      state: d.event_state,
      attempt: d.attempt,
      trigger: d.trigger,
      url: d.url,
      at: isoLocal(d.attempted_at.getTime()),
      http_status: d.http_status,
      error: d.error,
      latency_ms: d.latency_ms,
      delivered: d.error === null && d.http_status !== null && d.http_status >= 200 && d.http_status < 300,
    })),
  };
}
