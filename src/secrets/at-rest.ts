import { sql, type Transaction } from 'kysely';
import {
  encryptedSecretRows,
  lockAllSecretRows,
  lockClearSecretRows,
  openSecretRow,
  sealSecretRow,
} from '../db/repos/partners.ts';
import type { DB, Db } from '../db/schema.ts';
import { parseSealed, partnerSecretContext, SecretKeyError, type SecretBox } from './secret-box.ts';

/**
 * Taken (per transaction) by everything that rewrites stored secrets: the start-up conversion, the
 * sandbox admin token and `npm run admin -- secrets re-encrypt`. Instances starting together take
 * turns, and the second finds nothing left to do.
 */
const SECRETS_LOCK = 72635412;

export async function lockSecrets(trx: Transaction<DB>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${SECRETS_LOCK})`.execute(trx);
}

/**
 * At start, after the migrations: the "migration" of the rows that migration 5 could not encrypt
 * (it has no key). Every partner secret still in clear is encrypted under SECRET_KEY and its clear
 * text set to null, in one transaction; then every encrypted row must decrypt with this process's
 * keys, or the start stops here with a SecretKeyError that says which key the rows need (rather
 * than every partner getting 403). Idempotent: a second run, or a second instance, converts nothing.
 */
export async function secureStoredSecrets(
  db: Db,
  box: SecretBox,
  keySource: string,
): Promise<{ converted: number }> {
  return db.transaction().execute(async (trx) => {
    await lockSecrets(trx);
    const clear = await lockClearSecretRows(trx);
    for (const row of clear) {
      await sealSecretRow(trx, row.id, box.encrypt(row.secret!, partnerSecretContext(row.partner_id)));
    }
    const unreadable = new Map<string, number>();
    let altered = 0;
    for (const row of await encryptedSecretRows(trx)) {
      const id = parseSealed(row.secret_enc!)?.keyId ?? 'unknown';
      if (!box.keyIds.includes(id)) {
        unreadable.set(id, (unreadable.get(id) ?? 0) + 1);
        continue;
      }
      try {
        openSecretRow(box, row);
      } catch {
        altered++;
      }
    }
    if (unreadable.size > 0) {
      const under = [...unreadable].map(([id, n]) => `${n} under key ${id}`).join(', ');
      throw new SecretKeyError(
        `the database holds partner secrets encrypted with another key (${under}), and this process has ` +
          `${box.describeKeys()} from ${keySource}. Start with the key they were written under ` +
          '(the SECRET_KEY of the instances that wrote them, or the secret.key kept with this database); ' +
          'to move to a new key, set SECRET_KEY=new and SECRET_KEY_PREVIOUS=old, then run npm run admin -- secrets re-encrypt',
      );
    }
    if (altered > 0) {
      throw new SecretKeyError(
        `${altered} stored partner secret(s) fail authentication under their key: the rows were altered or copied between partners`,
      );
    }
    return { converted: clear.length };
  });
}

/**
 * `npm run admin -- secrets re-encrypt`: every stored secret (active and retired, and any row still
 * in clear) re-encrypted under SECRET_KEY, in one transaction; rows already under it are left as
 * they are. Answers how many rows changed. A row no key of this process opens aborts the whole
 * run, changing nothing.
 */
export async function reencryptSecrets(
  db: Db,
  box: SecretBox,
): Promise<{ reencrypted: number; rows: number; key_id: string }> {
  return db.transaction().execute(async (trx) => {
    await lockSecrets(trx);
    const rows = await lockAllSecretRows(trx);
    let changed = 0;
    for (const row of rows) {
      if (row.secret_enc !== null && !box.isStale(row.secret_enc)) continue;
      let clear: string;
      try {
        clear = openSecretRow(box, row);
      } catch (err) {
        throw new SecretKeyError(
          `partner secret row ${row.id} (partner ${row.partner_id}) cannot be read: ${(err as Error).message}. Nothing was changed`,
        );
      }
      await sealSecretRow(trx, row.id, box.encrypt(clear, partnerSecretContext(row.partner_id)));
      changed++;
    }
    return { reencrypted: changed, rows: rows.length, key_id: box.keyId };
  });
}
