import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A paid order waiting for its issue-order job: written by the statement (or transaction) that
-- moves the order to paid, taken in batches by the outbox's dispatcher, which creates the jobs and
-- deletes the rows in one transaction. One pg-boss insert per payment (twelve partial indexes, two
-- deferred foreign keys, a round trip) was a large share of a wallet payment's cost: decision 0024.
-- No foreign key: the row lives milliseconds, is written beside the order's own update, and a
-- check on every payment would cost more than the table.
create table issuance_outbox (
  order_id text primary key,
  queued_at timestamptz not null
);
`.execute(db);
}
