import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A partner's cancellation may refund less than the price (pro rata, decision 0087): the refund's
-- amount is what goes back, the fee what was withheld of it; an operator's refund withholds nothing.
alter table refunds add column fee bigint not null default 0 check (fee >= 0);

-- The previews of cancel-order and correct-order (decision 0088): what was promised, to whom, until
-- when, and for which version of the order (its updated_at); used_at once a confirmation used it.
create table after_sale_quotes (
  id text primary key,
  order_id text not null references orders(id),
  partner_id text not null references partners(id),
  kind text not null check (kind in ('cancel', 'correct')),
  terms jsonb not null,
  order_updated_at timestamptz not null,
  created_at timestamptz not null,
  valid_until timestamptz not null,
  used_at timestamptz
);
create index after_sale_quotes_order on after_sale_quotes (order_id);

-- An order is corrected once (decision 0088): when, and by whom.
alter table orders add column corrected_at timestamptz;
alter table orders add column corrected_by text;

-- A corrected vignette:eu is issued again in the background: completed → processing (decision 0088).
alter table order_events drop constraint order_events_transition;
alter table order_events add constraint order_events_transition check (
  case
    when from_status is null then to_status = 'draft'
    else (from_status = 'draft' and to_status in ('paid','expired')) or
      (from_status = 'paid' and to_status in ('processing','completed','failed')) or
      (from_status = 'processing' and to_status in ('completed','failed')) or
      (from_status = 'failed' and to_status = 'refunded') or
      (from_status = 'completed' and to_status in ('refunded','processing'))
  end
);

-- A corrected policy's old document answers 410 like a cancelled one.
alter table documents add column replaced_at timestamptz;
`.execute(db);
}
