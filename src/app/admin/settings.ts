import type { Kysely, Transaction } from 'kysely';
import { getSetting, putSetting } from '../../db/repos/settings.ts';
import type { DB } from '../../db/schema.ts';
import type { Services } from '../services.ts';

export const SPENDING_KEY = 'balance_spending_enabled';

/**
 * The operator's switch behind 403 `Balance spending is disabled`. Read from the database on
 * every payment (no cache), so a change holds at once on every instance sharing it.
 */
export async function balanceSpendingEnabled(db: Kysely<DB> | Transaction<DB>): Promise<boolean> {
  return (await getSetting<boolean>(db, SPENDING_KEY)) ?? true;
}

export async function readSettings(svc: Services) {
  return { balance_spending_enabled: await balanceSpendingEnabled(svc.db) };
}

export async function changeSettings(svc: Services, input: { balance_spending_enabled?: boolean }) {
  if (input.balance_spending_enabled !== undefined) {
    const at = new Date(await svc.clock.now());
    await putSetting(svc.db, SPENDING_KEY, input.balance_spending_enabled, at);
  }
  return readSettings(svc);
}
