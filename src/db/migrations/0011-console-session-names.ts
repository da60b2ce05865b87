import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- The console shows who is signed in: the operator's name as it was at sign-in (the admin token's
-- actor has no row in operators to read it from).
alter table console_sessions add column actor_name text not null default ''
  check (length(actor_name) <= 200);
`.execute(db);
}
