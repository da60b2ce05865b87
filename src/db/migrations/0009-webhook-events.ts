import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Which order events a partner's webhook receives beside completed (always sent).
alter table partners add column webhook_events text[] not null default '{completed}'
  check (webhook_events <@ array['completed','failed','refunded','expired']::text[]
         and 'completed' = any(webhook_events));

-- One row per event (a transition into completed, failed, refunded or expired), delivered at least
-- once. state: waiting (behind an earlier event of the same order), pending (a delivery job exists),
-- delivered, failed (the retry schedule ran out). Events of one order are delivered in seq order.
create table webhook_events (
  seq bigserial primary key,
  id text not null unique,
  partner_id text not null references partners(id),
  order_id text not null references orders(id),
  status text not null check (status in ('completed','failed','refunded','expired')),
  body text not null,
  state text not null check (state in ('waiting','pending','delivered','failed')),
  attempts integer not null default 0,
  created_at timestamptz not null,
  next_attempt_at timestamptz,
  settled_at timestamptz,
  unique (order_id, status)
);
create index webhook_events_open on webhook_events (order_id, seq) where state in ('waiting','pending');
create index webhook_events_partner on webhook_events (partner_id, seq);

alter table webhook_attempts add column event_id text references webhook_events(id);
alter table webhook_attempts add column attempt integer;
alter table webhook_attempts drop constraint webhook_attempts_trigger_check;
alter table webhook_attempts add constraint webhook_attempts_trigger_check
  check (trigger in ('completion','automatic','operator'));
`.execute(db);
}
