import pg from 'pg';
import { runScript, type Running } from './processes.ts';
import { fmt, signedLoad, timed, warmUp, type Context, type Measured, type Scenario } from './scenarios.ts';

/** How many orders the second window runs with (BENCH_ORDERS_LARGE, default 1 000 000); the first, 10 000. */
export const ORDERS_SMALL = 10_000;
export const ORDERS_LARGE = Number(process.env.BENCH_ORDERS_LARGE || 1_000_000);
/** The demo orders each window asks for, in turn, chosen at random among the demo partner's. */
const IDS = 5000;

/**
 * get-order with 10 000 orders in the database, then with BENCH_ORDERS_LARGE: each window after
 * `npm run seed:orders` brought the database up to that many (a fifth of them the demo partner's),
 * over ids chosen at random among all the demo's orders at that point. The second row is judged by
 * p99(large) ÷ p99(small). On a service of its own (a fresh database), WORKERS=false.
 */
export const getOrder: Scenario = {
  name: 'get-order',
  workers: false,
  ownDatabase: true,
  async run(target, ctx) {
    const small = await measured(target, ctx, ORDERS_SMALL);
    const large = await measured(target, ctx, ORDERS_LARGE);
    const ratio = large.p99Ms / small.p99Ms;
    large.verdict = {
      anchor: `p99 with ${fmt(ORDERS_SMALL)} orders: ${fmt(small.p99Ms, 1)} ms`,
      ratio: `${fmt(ratio, 2)}× (p99 ÷ p99)`,
      target: '≤ 1.2×',
      met: ratio <= 1.2,
    };
    small.verdict = { anchor: '—', ratio: '—', target: '(the anchor of the next row)', met: undefined };
    return [small, large];
  },
};

async function measured(target: Running, ctx: Context, orders: number): Promise<Measured> {
  const started = performance.now();
  const seeded = await runScript(
    'scripts/seed-orders.ts',
    ['--orders', String(orders), '--partner', target.demo.id],
    ctx.database.env,
    '  seed: ',
  );
  if (seeded.code !== 0) throw new Error(`seed:orders exited ${seeded.code}`);
  console.log(
    `  seeded up to ${fmt(orders)} orders in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const ids = await demoOrders(ctx.database.url, target.demo.id);
  const load = signedLoad(
    target,
    '/v1/get-order',
    ids.map((id) => ({ id })),
    ctx.connections,
  );
  await ctx.settle();
  await warmUp(load);
  return { ...timed(await load(ctx.seconds)), label: `, ${fmt(orders)} orders` };
}

/** Random ids of the partner's orders, and the plan of get-order's query for one of them. */
async function demoOrders(url: string, partner: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string }>(
      'select id from orders where partner_id = $1 order by random() limit $2',
      [partner, IDS],
    );
    const id = rows[0]?.id ?? '';
    // The statement of src/db/repos/orders.ts findOrderWithItems: the order and its items.
    for (const q of [
      `select orders.*, (select coalesce(json_agg(i order by i.idx), '[]'::json) from order_items i
       where i.order_id = orders.id) as _items from orders where id = $1`,
    ]) {
      const plan = await c.query<{ 'QUERY PLAN': string }>(`explain ${q}`, [id]);
      const text = plan.rows.map((r) => r['QUERY PLAN']).join(' / ');
      console.log(`  ${/Seq Scan/.test(text) ? 'SEQ SCAN! ' : ''}explain ${q}: ${text}`);
    }
    return rows.map((r) => r.id);
  } finally {
    await c.end();
  }
}
