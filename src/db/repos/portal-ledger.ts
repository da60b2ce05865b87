import type { Db } from '../schema.ts';
import type { LedgerRow } from './wallets.ts';

/** A page of a partner's ledger entries booked in [from, to), newest first, keyset-paged by id. */
export async function ledgerPageBetween(
  db: Db,
  partnerId: string,
  f: { from: Date; to: Date; beforeId?: number; limit: number },
): Promise<LedgerRow[]> {
  let q = db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', f.from)
    .where('created_at', '<', f.to);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}
