import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Events a partner can list and replay (decision 0091): every event is recorded, whether or not the
-- partner has a webhook URL or receives its type; one it would not receive is 'not_subscribed'.
-- Two types beside the statuses: corrected (a correction by the partner) and expiring (a renewal
-- notice, decision 0092). resends counts re-sends asked for after the automatic attempts.
alter table webhook_events drop constraint webhook_events_status_check;
alter table webhook_events add constraint webhook_events_status_check
  check (status in ('completed','failed','refunded','expired','corrected','expiring'));
alter table webhook_events drop constraint webhook_events_state_check;
alter table webhook_events add constraint webhook_events_state_check
  check (state in ('waiting','pending','delivered','failed','not_subscribed'));
alter table webhook_events add column resends integer not null default 0;
-- list-events filtered by type; the retention job's oldest events first.
create index if not exists webhook_events_partner_type on webhook_events (partner_id, status, seq);
create index if not exists webhook_events_created on webhook_events (created_at);

alter table webhook_attempts drop constraint webhook_attempts_trigger_check;
alter table webhook_attempts add constraint webhook_attempts_trigger_check
  check (trigger in ('completion','automatic','operator','partner'));

alter table partners drop constraint partners_webhook_events_check;
alter table partners add constraint partners_webhook_events_check
  check (webhook_events <@ array['completed','failed','refunded','expired','corrected','expiring']::text[]
         and 'completed' = any(webhook_events));
-- Days before a policy's last day that its renewal notice (the expiring event) is made; 0: none.
alter table partners add column renewal_notice_days integer not null default 30
  check (renewal_notice_days between 0 and 365);

-- When the renewal job handled a completed order: its expiring event made, or none due (a policy
-- shorter than 90 days). Orders not yet handled are the partial index the job reads by end date.
alter table orders add column renewal_noticed_at timestamptz;
create index if not exists orders_renewal_due on orders (end_date)
  where status = 'completed' and renewal_noticed_at is null;
`.execute(db);
}
