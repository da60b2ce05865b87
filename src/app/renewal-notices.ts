import { addDays, daysBetween, localDate } from '../domain/time.ts';
import { insertNotices, lockDueOrders, longestNotice, settleEndedPolicies } from '../db/repos/renewals.ts';
import { eventBody } from '../db/repos/webhooks.ts';
import type { Services } from './services.ts';
import { newEventId } from './webhook-events.ts';

/** A policy this long or longer (first to last day) gets a renewal notice (decision 0092). */
export const RENEWAL_MIN_DAYS = 90;
/** Orders one transaction of the job handles. */
const BATCH = 1000;

/**
 * The renewal job (decision 0092): every completed order whose policy runs 90 days or more gets one
 * `expiring` event once its partner's `renewal_notice_days` or fewer remain before its last day
 * (by the service clock, so the sandbox's test clock moved forward produces them). Orders whose
 * policy ended, and shorter policies once in their window, are marked handled without one. Runs in
 * batches, each a transaction holding its orders' row locks; instances running it at once share
 * the work (rows another holds are skipped) and the unique (order, type) of events makes one
 * notice an order whatever happens. Answers the events made.
 */
export async function sendRenewalNotices(svc: Services): Promise<number> {
  const nowMs = await svc.clock.now();
  const at = new Date(nowMs);
  const today = localDate(nowMs);
  for (;;) {
    const n = await svc.db.transaction().execute((trx) => settleEndedPolicies(trx, today, at, 5 * BATCH));
    if (n < 5 * BATCH) break;
  }
  let made = 0;
  for (;;) {
    const { locked, events, queued, marked } = await svc.db.transaction().execute(async (trx) => {
      const days = await longestNotice(trx);
      if (days <= 0) return { locked: 0, events: 0, queued: 0, marked: 0 };
      const due = await lockDueOrders(trx, today, addDays(today, days), BATCH);
      if (due.length === 0) return { locked: 0, events: 0, queued: 0, marked: 0 };
      const notices = due
        .filter((o) => o.start_date !== null && daysBetween(o.start_date, o.end_date) + 1 >= RENEWAL_MIN_DAYS)
        .map((o) => ({ eventId: newEventId(svc), orderId: o.id, body: eventBody(o.id, 'expiring') }));
      const r = await insertNotices(
        trx,
        notices,
        due.map((o) => o.id),
        at,
      );
      return { locked: due.length, ...r };
    });
    made += events;
    if (queued > 0) svc.jobs.deliveriesQueued();
    // A full batch of orders whose events are all still open marks nothing: they wait for a later run.
    if (locked < BATCH || marked === 0) return made;
  }
}
