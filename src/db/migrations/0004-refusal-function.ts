import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A statement refuses (and so rolls back everything it and its transaction did) by calling this
-- in a CASE: the wallet payment books and commits in one message, and a payment no sub-wallet
-- covers must not commit the rest of its transaction. Volatile, so it is never folded early.
create function polita_refuse(reason text) returns boolean language plpgsql volatile as $$
begin
  raise exception '%', reason using errcode = 'P0001';
end
$$;
`.execute(db);
}
