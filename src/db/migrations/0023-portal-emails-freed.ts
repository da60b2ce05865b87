import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- An address is held by the one enabled user who set a password with it (decision 0086): an
-- invitation not accepted, or a disabled user, no longer keeps it from another partner's invitation.
-- Within one partner an address is still one user.
drop index portal_users_email;
create unique index portal_users_email on portal_users (lower(email))
  where password_hash is not null and disabled_at is null;
create unique index portal_users_partner_email on portal_users (partner_id, lower(email));
`.execute(db);
}
