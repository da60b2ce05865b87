import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Why a failed or refunded order is so, in a sentence for a person (get-order shows it).
alter table orders add column failure_reason text;
`.execute(db);
}
