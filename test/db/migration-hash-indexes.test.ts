import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { testDatabaseUrl } from '../support/database.ts';

/** Migration 15: the hash indexes get-order's reads by id use (README "Reads by order id"). */
describe('migration 15, hash indexes for reads by order id', () => {
  let db: Awaited<ReturnType<typeof testDatabaseUrl>>;
  let c: pg.Client;
  beforeAll(async () => {
    db = await testDatabaseUrl();
    c = new pg.Client({ connectionString: db.url });
    await c.connect();
  });
  afterAll(async () => {
    await c.end();
    await db.drop();
  });

  const hashIndexes = async () =>
    (
      await c.query<{ indexname: string; indexdef: string }>(
        `select indexname, indexdef from pg_indexes
         where indexname in ('orders_id_hash', 'order_items_order_hash') order by indexname`,
      )
    ).rows;

  it('builds a hash index on orders.id and one on order_items.order_id, beside the primary keys', async () => {
    expect(await hashIndexes()).toEqual([
      {
        indexname: 'order_items_order_hash',
        indexdef: expect.stringMatching(/ON public\.order_items USING hash \(order_id\)$/),
      },
      {
        indexname: 'orders_id_hash',
        indexdef: expect.stringMatching(/ON public\.orders USING hash \(id\)$/),
      },
    ]);
    const pkeys = await c.query(
      `select conname from pg_constraint where contype = 'p' and conrelid in ('orders'::regclass, 'order_items'::regclass)`,
    );
    expect(pkeys.rowCount).toBe(2);
  });

  it('finds the indexes an operator built beforehand with create index concurrently, and completes', async () => {
    // The database as an operator leaves it before starting the new version: migrations up to 14,
    // the two indexes built without blocking writes.
    await c.query(`delete from kysely_migration where name = '0015-order-hash-indexes'`);
    await c.query('drop index orders_id_hash, order_items_order_hash');
    await c.query('create index concurrently orders_id_hash on orders using hash (id)');
    await c.query('create index concurrently order_items_order_hash on order_items using hash (order_id)');

    const database = await openDatabase({ databaseUrl: db.url, dataDir: '', poolSize: 1 });
    await database.close();

    const applied = await c.query(`select name from kysely_migration where name like '0015-%'`);
    expect(applied.rows).toEqual([{ name: '0015-order-hash-indexes' }]);
    expect((await hashIndexes()).map((r) => r.indexname)).toEqual([
      'order_items_order_hash',
      'orders_id_hash',
    ]);
  });
});
