import { notFound } from '../../domain/errors.ts';
import { isoLocal } from '../../domain/time.ts';
import { findPartner } from '../../db/repos/partners.ts';
import { recentEvents } from '../../db/repos/event-log.ts';
import { recentDeliveries } from '../../db/repos/portal-deliveries.ts';
import { EVENT_RETENTION_DAYS } from '../partner-events.ts';
import type { Services } from '../services.ts';
import type { PortalUser } from './roles.ts';

/** How many deliveries Developers lists. */
export const DELIVERIES = 100;
/** How many of the newest events Developers lists. */
export const EVENTS = 20;

/**
 * What Developers shows: the partner id, its secrets' state (how many are valid, and until when the
 * previous one works after a rotation), the webhook URL and events, and the last deliveries.
 */
export async function readDevelopers(svc: Services, user: PortalUser) {
  const partner = await findPartner(svc.db, user.partnerId);
  if (!partner) throw notFound('Partner not found');
  const deliveries = await recentDeliveries(svc.db, user.partnerId, DELIVERIES);
  const since = new Date((await svc.clock.now()) - EVENT_RETENTION_DAYS * 86_400_000);
  const events = await recentEvents(svc.db, user.partnerId, since, EVENTS);
  return {
    partner_id: partner.id,
    valid_secrets: partner.secrets.length,
    // The previous secret's end, by the real clock (decision 0040).
    previous_secret_until: partner.secretsChangeAt ? isoLocal(partner.secretsChangeAt.getTime()) : null,
    require_timestamped_signature: partner.require_timestamped_signature,
    webhook_url: partner.webhook_url,
    webhook_events: partner.webhook_events,
    renewal_notice_days: partner.renewal_notice_days,
    events: events.map((e) => ({
      id: e.id,
      type: e.status,
      order_id: e.order_id,
      delivery: e.state === 'waiting' ? 'pending' : e.state,
      attempts: Number(e.attempts),
      at: isoLocal(e.created_at.getTime()),
    })),
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
