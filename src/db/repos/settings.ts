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
