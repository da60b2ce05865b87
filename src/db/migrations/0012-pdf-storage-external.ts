import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A policy PDF is deflated already. Stored as 'extended', PostgreSQL ran pglz over most of each one
-- before giving up on it, for the same bytes on disk as 'external' (out of line, uncompressed):
-- decision 0029. New rows only, none is rewritten.
alter table documents alter column pdf set storage external;
`.execute(db);
}
