import type { Selectable, Transaction } from 'kysely';
import type { AfterSaleQuotesTable, DB, Db } from '../schema.ts';
export type AfterSaleQuoteRow = Selectable<AfterSaleQuotesTable>;

export async function insertQuote(
  db: Db,
  q: Omit<AfterSaleQuoteRow, 'terms' | 'used_at'> & { terms: Record<string, unknown> },
): Promise<void> {
  await db
    .insertInto('after_sale_quotes')
    .values({ ...q, terms: JSON.stringify(q.terms), used_at: null })
    .execute();
}

/** The quote, locked: two confirmations naming it queue here, behind the order's lock. */
export async function lockQuote(trx: Transaction<DB>, id: string): Promise<AfterSaleQuoteRow | undefined> {
  return trx.selectFrom('after_sale_quotes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function markQuoteUsed(trx: Transaction<DB>, id: string, at: Date): Promise<void> {
  await trx.updateTable('after_sale_quotes').set({ used_at: at }).where('id', '=', id).execute();
}
