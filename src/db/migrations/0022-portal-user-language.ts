import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- The portal language a user chose (decision 0096); null until they choose: Accept-Language decides.
alter table portal_users add column language text check (language in ('ro', 'ru', 'en'));
`.execute(db);
}
