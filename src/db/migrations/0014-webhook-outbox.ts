import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- The pending event of an order that issuance completed, waiting for its first deliver-webhook
-- job: written by the statement that completes the order, taken in batches like the issuance
-- outbox, so that the job's pg-boss insert and a transaction around it cost an issued order no round
-- trips (decision 0025). No foreign key, as for issuance_outbox.
create table webhook_outbox (
  event_id text primary key,
  partner_id text not null,
  queued_at timestamptz not null
);
`.execute(db);
}
