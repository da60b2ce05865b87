import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A partner's requests a minute on /v1; null: the service's RATE_LIMIT_PER_MINUTE.
alter table partners add column rate_limit_per_minute integer
  check (rate_limit_per_minute is null or rate_limit_per_minute between 1 and 1000000);
-- Request counts per key and fixed window, added to by every instance a few times a second.
-- Unlogged: counts are worth nothing after a crash, and the table takes many small writes.
create unlogged table rate_limit_counters (
  key text not null,
  window_start timestamptz not null,
  count integer not null,
  primary key (key, window_start)
);
`.execute(db);
}
