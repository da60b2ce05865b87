import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- One refund per order. A wallet-paid order is credited back at once (settled, with its ledger
-- entry); a customer-paid one waits for the operator to return the money (to_settle).
create table refunds (
  order_id text primary key references orders(id),
  method text not null check (method in ('customer','wallet')),
  amount bigint not null check (amount >= 0),
  status text not null check (status in ('to_settle','settled')),
  reason text not null,
  actor text not null,
  ledger_entry_id bigint references ledger_entries(id),
  created_at timestamptz not null,
  settled_at timestamptz,
  check (method = 'customer' or status = 'settled')
);
create index refunds_to_settle on refunds (created_at) where status = 'to_settle';
`.execute(db);
}
