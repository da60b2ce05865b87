import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Migration 1's check let (null → any status) through: from_status = 'draft' is null when
-- from_status is null, and a check that evaluates to null passes. Same table, no null branch.
alter table order_events drop constraint order_events_check;
alter table order_events add constraint order_events_transition check (
  case
    when from_status is null then to_status = 'draft'
    else (from_status = 'draft' and to_status in ('paid','expired')) or
      (from_status = 'paid' and to_status in ('processing','completed','failed')) or
      (from_status = 'processing' and to_status in ('completed','failed')) or
      (from_status = 'failed' and to_status = 'refunded') or
      (from_status = 'completed' and to_status = 'refunded')
  end
);
`.execute(db);
}
