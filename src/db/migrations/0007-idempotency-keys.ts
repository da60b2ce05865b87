import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- The answer to a partner's write sent with an Idempotency-Key, kept 24 h: a retry with the same key
-- and body gets it again. completed_at is null while the first request runs.
create table idempotency_keys (
  partner_id text not null references partners(id),
  key text not null,
  request_hash text not null,
  created_at timestamptz not null,
  completed_at timestamptz,
  response_status integer,
  response_body text,
  primary key (partner_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
`.execute(db);
}
