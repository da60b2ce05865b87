import { sql } from 'kysely';
import type { Db } from '../schema.ts';

export async function getSetting<T>(db: Db, key: string): Promise<T | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value as T | undefined;
}

export async function putSetting(db: Db, key: string, value: unknown, at: Date): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value), updated_at: at })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value), updated_at: at }))
    .execute();
}

export async function deleteSetting(db: Db, key: string): Promise<void> {
  await db.deleteFrom('settings').where('key', '=', key).execute();
}

/**
 * The operator's balance-spending switch stored under `key`, as SQL: on unless it is stored as
 * false (no row: on). Every read of the switch is this expression, the payment statements' and
 * the settings' alike, so its default is stated here only.
 */
export const spendingEnabledSql = (key: unknown) =>
  sql<boolean>`coalesce((select s.value from settings s where s.key = ${key}), 'true') <> 'false'::jsonb`;

/** The balance-spending switch stored under `key` ({@link spendingEnabledSql}). */
export async function readSpendingEnabled(db: Db, key: string): Promise<boolean> {
  const row = await db.selectNoFrom(spendingEnabledSql(key).as('enabled')).executeTakeFirstOrThrow();
  return row.enabled;
}
