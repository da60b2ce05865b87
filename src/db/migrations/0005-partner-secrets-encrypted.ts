import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Partner secrets are stored encrypted (AES-256-GCM under SECRET_KEY, src/secrets/secret-box.ts):
-- secret_enc is 'v1:<key id>:<iv>:<tag>:<ciphertext>'. The key never reaches the database, so the
-- rows still in clear are encrypted by the service at start (src/secrets/at-rest.ts), which then
-- sets their secret to null; new rows are written encrypted only. Exactly one of the two is set.
alter table partner_secrets add column secret_enc text;
alter table partner_secrets alter column secret drop not null;
alter table partner_secrets add constraint partner_secrets_one_form check (num_nonnulls(secret, secret_enc) = 1);
`.execute(db);
}
