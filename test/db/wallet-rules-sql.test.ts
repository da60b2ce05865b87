import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPENDING_KEY } from '../../src/app/admin/settings.ts';
import { deleteSetting, putSetting, readSpendingEnabled } from '../../src/db/repos/settings.ts';
import { booksEntrySql } from '../../src/db/repos/wallet-payments.ts';
import { booksEntry } from '../../src/domain/wallet.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * The wallet's rules that the payment statements state in SQL, each named once (decision 0099): the
 * SQL held to the domain's rule, and the spending switch's default.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

describe('the wallet rules in SQL', () => {
  it('books a ledger entry for the prices booksEntry books one for, and for no other', async () => {
    const db = h.service.svc.db;
    for (const price of [-1, 0, 1, 100, 1_000_000_000_00]) {
      const { books } = await db
        .selectNoFrom(booksEntrySql(sql`${price}::bigint`).as('books'))
        .executeTakeFirstOrThrow();
      expect(books, `price ${price}`).toBe(booksEntry(price));
    }
  });

  it('reads the spending switch as on unless it is stored as false', async () => {
    const db = h.service.svc.db;
    const at = new Date();
    await deleteSetting(db, SPENDING_KEY);
    expect(await readSpendingEnabled(db, SPENDING_KEY)).toBe(true);
    await putSetting(db, SPENDING_KEY, false, at);
    expect(await readSpendingEnabled(db, SPENDING_KEY)).toBe(false);
    await putSetting(db, SPENDING_KEY, true, at);
    expect(await readSpendingEnabled(db, SPENDING_KEY)).toBe(true);
    // Anything but false is on, as every payment has always read it.
    await putSetting(db, SPENDING_KEY, 'no', at);
    expect(await readSpendingEnabled(db, SPENDING_KEY)).toBe(true);
    await deleteSetting(db, SPENDING_KEY);
  });
});
