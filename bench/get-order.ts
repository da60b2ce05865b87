import pg from 'pg';
import { runScript, type Running } from './processes.ts';
import {
  fmt,
  pooled,
  quantile,
  signedLoad,
  warmUp,
  type Context,
  type Load,
  type Scenario,
} from './scenarios.ts';

/** How many orders the second window runs with (BENCH_ORDERS_LARGE, default 1 000 000); the first, 10 000. */
export const ORDERS_SMALL = 10_000;
export const ORDERS_LARGE = Number(process.env.BENCH_ORDERS_LARGE || 1_000_000);
/**
 * The demo orders each window asks for, in turn, chosen at random among the demo partner's: as many
 * on both databases, all the small one's (a fifth of it is the demo partner's), so that only the
 * table's size differs between the rows. With 5 000 on the large one against the small one's 2 000,
 * the large one's requests also touched two and a half times the pages.
 */
export const IDS = ORDERS_SMALL / 5;

/**
 * The statement of src/db/repos/orders.ts ordersWithItemsStatement: the orders asked for during one
 * turn of the event loop, with their items; at 50 connections, up to 50 of them.
 */
export const READ_STATEMENT = `select orders.*, (select coalesce(json_agg(i order by i.idx), '[]'::json) from order_items i
       where i.order_id = orders.id) as _items from orders where id = any($1::text[])`;

/** Windows of each database, taken in turn, each 1/ROUNDS of BENCH_SECONDS (at least 2 s). */
const ROUNDS = 4;

/**
 * get-order with 10 000 orders in the database against get-order with BENCH_ORDERS_LARGE: two
 * WORKERS=false services on fresh databases of the engine, filled by `npm run seed:orders` (a
 * fifth of each the demo partner's), each asked for random ids among its demo orders. Their windows
 * alternate, so both rows sample the same minutes of a machine whose speed drifts: measured one
 * after the other, minutes apart, the ratio came out anywhere between 0.67× and 1.33× for the same
 * code. Each row pools its windows' replies; the second is judged by p99(large) ÷ p99(small).
 */
export const getOrder: Scenario = {
  name: 'get-order',
  workers: false,
  ownDatabase: true,
  async run(target, ctx) {
    const sibling = await ctx.sibling();
    try {
      const small = await prepared(target, ctx.database, ctx.connections, ORDERS_SMALL);
      const large = await prepared(sibling.service, sibling.database, ctx.connections, ORDERS_LARGE);
      await ctx.settle();
      await sibling.settle();
      await warmUp(large);
      await warmUp(small);
      const windows: { small: Load[]; large: Load[] } = { small: [], large: [] };
      const seconds = Math.max(2, Math.round(ctx.seconds / ROUNDS));
      // small, large, large, small, small, large…: each goes first as often as second. Taken as
      // small, large every round, the first window of each round had the worse p99 (0.53× one way
      // round, 0.97× the other, the same databases).
      for (let round = 0; round < ROUNDS; round++) {
        for (const size of round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const)) {
          windows[size].push(await (size === 'small' ? small : large)(seconds));
        }
      }
      // The verdict is on the pooled replies; each window's p99 beside it tells a window the machine
      // stalled (one p99 far from its three siblings) from a difference between the databases.
      const p99s = (loads: Load[]) => loads.map((l) => fmt(quantile(l.latencies, 0.99), 1)).join(', ');
      console.log(
        `  get-order p99 of each window, ms, in order: ${fmt(ORDERS_SMALL)} orders ${p99s(windows.small)}; ${fmt(ORDERS_LARGE)} orders ${p99s(windows.large)}`,
      );
      const rows = {
        small: { ...pooled(windows.small), label: `, ${fmt(ORDERS_SMALL)} orders` },
        large: { ...pooled(windows.large), label: `, ${fmt(ORDERS_LARGE)} orders` },
      };
      const ratio = rows.large.p99Ms / rows.small.p99Ms;
      rows.large.verdict = {
        anchor: `p99 with ${fmt(ORDERS_SMALL)} orders: ${fmt(rows.small.p99Ms, 1)} ms`,
        ratio: `${fmt(ratio, 2)}× (p99 ÷ p99)`,
        target: '≤ 1.2×',
        met: ratio <= 1.2,
      };
      rows.small.verdict = {
        anchor: '—',
        ratio: '—',
        target: '(the anchor of the next row)',
        met: undefined,
      };
      return [rows.small, rows.large];
    } finally {
      await sibling.stop();
    }
  },
};

/** A service's database seeded up to `orders`, and the load of get-order over its demo orders. */
async function prepared(
  target: Running,
  database: Context['database'],
  connections: number,
  orders: number,
): Promise<(seconds: number) => Promise<Load>> {
  return signedLoad(target, '/v1/get-order', await getOrderBodies(target, database, orders), connections);
}

/**
 * A service's database seeded up to `orders` (`npm run seed:orders`), and get-order bodies for
 * random ids of its demo orders: what the get-order row, `bench:cost` and `bench:ab` ask for.
 */
export async function getOrderBodies(
  target: Running,
  database: Context['database'],
  orders: number,
): Promise<{ id: string }[]> {
  const started = performance.now();
  const seeded = await runScript(
    'scripts/seed-orders.ts',
    ['--orders', String(orders), '--partner', target.demo.id],
    database.env,
    '  seed: ',
  );
  if (seeded.code !== 0) throw new Error(`seed:orders exited ${seeded.code}`);
  console.log(
    `  seeded up to ${fmt(orders)} orders in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const ids = await demoOrders(database.url, target.demo.id);
  return ids.map((id) => ({ id }));
}

/** Random ids of the partner's orders, and the plan of get-order's query for one of them. */
async function demoOrders(url: string, partner: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const ids = await randomOrderIds(c, partner);
    const batch = ids.slice(0, 50);
    for (const q of [READ_STATEMENT]) {
      const plan = await c.query<{ 'QUERY PLAN': string }>(`explain ${q}`, [batch]);
      // The ids' literal array shown as the parameter it is.
      const text = plan.rows.map((r) => r['QUERY PLAN'].replace(/'\{[^}]*\}'::text\[\]/g, '$$1')).join(' / ');
      console.log(`  ${/Seq Scan/.test(text) ? 'SEQ SCAN! ' : ''}explain ${q}: ${text}`);
    }
    return ids;
  } finally {
    await c.end();
  }
}

/** IDS of the partner's orders, in random order: what both get-order windows ask for. */
export async function randomOrderIds(c: pg.Client, partner: string): Promise<string[]> {
  const { rows } = await c.query<{ id: string }>(
    'select id from orders where partner_id = $1 order by random() limit $2',
    [partner, IDS],
  );
  return rows.map((r) => r.id);
}
