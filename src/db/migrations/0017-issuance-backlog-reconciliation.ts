import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Paid orders not yet issued, oldest first, for the issuance backlog metric (decision 0056): a
-- handful of rows at any time, however many orders the table holds, so each scrape reads an index
-- leaf rather than the table.
create index orders_awaiting_issue on orders (paid_at) where status in ('paid', 'processing');

-- The last in-service reconciliation (decision 0056): one row, rewritten by each run, read by
-- every instance's metrics.
create table reconciliation_status (
  id boolean primary key default true check (id),
  ran_at timestamptz not null,
  differences integer not null,
  wallets integer not null,
  orders integer not null,
  seconds double precision not null
);
`.execute(db);
}
