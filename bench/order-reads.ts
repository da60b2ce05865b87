import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { seedOrders } from '../scripts/seed-orders.ts';
import { scratchDatabase, settle } from './anchors.ts';
import { ORDERS_LARGE, ORDERS_SMALL, randomOrderIds, READ_STATEMENT } from './get-order.ts';
import { fmt, quantile } from './scenarios.ts';

/**
 * `npm run bench:reads`: get-order's statement alone, on two scratch databases of BENCH_PG (10 000
 * orders and BENCH_ORDERS_LARGE, default 1 000 000, filled as `npm run seed:orders` fills them),
 * with the hash indexes of migration 15 and without them (dropped inside a transaction that is
 * rolled back): the shared buffers one batch of 50 ids touches (EXPLAIN (ANALYZE, BUFFERS)) and the
 * statement's time from this process, one connection, prepared, as the service sends it. The four
 * cells are measured in turn, ROUNDS times, so all of them sample the same minutes of the machine.
 */
const SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = [ORDERS_SMALL, ORDERS_LARGE];
const BATCH = 50;
const STATEMENTS = 1_000;
const ROUNDS = 4;
const HASH_INDEXES = ['orders_id_hash', 'order_items_order_hash'];

interface Cell {
  label: string;
  times: number[];
  buffers: number[];
}

async function seeded(url: string, orders: number): Promise<string[]> {
  const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1 });
  try {
    const now = new Date();
    await database.db
      .insertInto('partners')
      .values({ id: 'demo', name: 'Demo', webhook_url: null, created_at: now, updated_at: now })
      .execute();
    await seedOrders(database.db, { orders, partner: 'demo' });
  } finally {
    await database.close();
  }
  await settle(url);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // As the get-order bench asks: as many ids on both sizes, all of the small one's demo orders.
    return await randomOrderIds(c, 'demo');
  } finally {
    await c.end();
  }
}

/** One round of one cell: STATEMENTS reads of BATCH random ids, in a transaction rolled back. */
async function measure(url: string, ids: string[], hash: boolean, cell: Cell, round: number) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const pick = () => Array.from({ length: BATCH }, () => ids[Math.floor(Math.random() * ids.length)]);
  try {
    await c.query('begin');
    if (!hash) await c.query(`drop index ${HASH_INDEXES.join(', ')}`);
    const name = 'read'; // a connection of its own per cell and round
    for (let i = 0; i < STATEMENTS / 4; i++) await c.query({ name, text: READ_STATEMENT, values: [pick()] }); // warm
    for (let i = 0; i < STATEMENTS; i++) {
      const started = performance.now();
      await c.query({ name, text: READ_STATEMENT, values: [pick()] });
      cell.times.push(performance.now() - started);
    }
    // EXPLAIN plans for these ids (a custom plan); the timed statement may run PostgreSQL's generic
    // plan after its fifth execution. On a million orders both take the same scans (checked with
    // plan_cache_mode = force_generic_plan: the two hash indexes).
    for (let i = 0; i < 5; i++) {
      const plan = await c.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${READ_STATEMENT}`, [
        pick(),
      ]);
      // The top node's line counts its subplan's buffers too; read= is there only on a cold cache.
      const hits = /shared hit=(\d+)(?: read=(\d+))?/.exec(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
      if (hits) cell.buffers.push(Number(hits[1]) + Number(hits[2] ?? 0));
      if (i === 0 && round === 0) {
        const text = plan.rows.map((r) => r['QUERY PLAN']).filter((l) => /Scan/.test(l));
        console.log(`  ${cell.label}: ${text.map((l) => l.trim().replace(/\s*\(.*$/, '')).join(' / ')}`);
      }
    }
  } finally {
    await c.query('rollback').catch(() => {});
    await c.end();
  }
}

async function main() {
  console.log(
    `get-order's statement, ${BATCH} ids a statement, ${STATEMENTS} statements a cell in each of ${ROUNDS} rounds, on ${SERVER.replace(/\/\/[^@]*@/, '//')}`,
  );
  await scratchDatabase(SERVER, 'bench_reads_small', (small) =>
    scratchDatabase(SERVER, 'bench_reads_large', async (large) => {
      const databases = [
        { orders: SIZES[0]!, url: small, ids: await seeded(small, SIZES[0]!) },
        { orders: SIZES[1]!, url: large, ids: await seeded(large, SIZES[1]!) },
      ];
      console.log(`  seeded ${databases.map((d) => fmt(d.orders)).join(' and ')} orders`);
      const cells = databases.flatMap((d) =>
        [true, false].map((hash) => ({
          d,
          hash,
          cell: {
            label: `${fmt(d.orders)} orders, ${hash ? 'hash' : 'b-tree'}`,
            times: [],
            buffers: [],
          } as Cell,
        })),
      );
      for (let round = 0; round < ROUNDS; round++) {
        // Each round in the other direction, so no cell always follows the same one.
        for (const x of round % 2 === 0 ? cells : [...cells].reverse()) {
          await measure(x.d.url, x.d.ids, x.hash, x.cell, round);
        }
      }
      console.log('\n| database | indexes | shared buffers a statement (median) | p50 ms | p99 ms |');
      console.log('| --- | --- | --- | --- | --- |');
      for (const { d, hash, cell } of cells) {
        const t = [...cell.times].sort((a, b) => a - b);
        const b = [...cell.buffers].sort((x, y) => x - y);
        console.log(
          `| ${fmt(d.orders)} orders | ${hash ? "with migration 15's" : 'primary keys only'} | ${b[Math.floor(b.length / 2)]} | ${fmt(quantile(t, 0.5), 3)} | ${fmt(quantile(t, 0.99), 3)} |`,
        );
      }
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
