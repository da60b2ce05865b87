import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- A partner switched to timestamped request signatures (decision 0045): the contract's
-- X-Hmac-Signature alone is then refused. Off by default: the contract's behaviour stands.
alter table partners add column require_timestamped_signature boolean not null default false;
-- Console sessions bound to the token that opened them (decision 0047): its SHA-256. A session
-- whose token is no longer the operator's (ADMIN_TOKEN changed, an operator's token rotated) ends;
-- null, a session from before this migration, ends at its next request.
alter table console_sessions add column token_sha256 text;
`.execute(db);
}
