import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { sendRenewalNotices } from '../src/app/renewal-notices.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { scratchDatabase, settle } from './anchors.ts';
import { startPolita } from './processes.ts';
import { fmt, signedLoad, timed, warmUp, type Body } from './scenarios.ts';

/**
 * `npm run bench:events`: list-events and the renewal job (decisions 0091, 0092) on a scratch
 * database of BENCH_PG holding BENCH_ROWS (default 1 000 000) completed orders and as many events.
 *
 * Made by SQL generate_series, not by the service: one annual RCA order each (no items: neither
 * path reads them), spread over the demo partner and four others (a fifth each), their last days
 * spread evenly from 30 days ago to 364 days ahead; one event per order (completed mostly, a
 * twentieth refunded, a twentieth failed, a fiftieth expired), created evenly over the last 29
 * days in the order of their positions, delivered.
 *
 * list-events: the service as `npm start` runs it (workers off), 50 connections for BENCH_SECONDS
 * (default 10) after a warm-up, signed requests of the demo partner: pages of 50 after random
 * cursors; the same filtered by type `refunded`; one order's events. Then the renewal job, in this
 * process, on the same database: its first run (the ended policies marked, the notices of the
 * next 30 days made), a second run with nothing due at once and again after a VACUUM of orders
 * (what each minute's run costs), and a run with the clock one day on (a day's notices).
 */
const SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const ROWS = Number(process.env.BENCH_ROWS || 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = 50;
const PARTNERS = ['demo', 'seed-1', 'seed-2', 'seed-3', 'seed-4'];
/** The service started as a child and the one in this process must read the same partner secrets. */
const SECRET_KEY = process.env.BENCH_SECRET_KEY || randomBytes(32).toString('hex');
const ADMIN_TOKEN = process.env.BENCH_ADMIN_TOKEN || randomBytes(32).toString('hex');
const KEYS = { SECRET_KEY, ADMIN_TOKEN };

async function fill(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('set synchronous_commit = off');
    for (const id of PARTNERS.slice(1)) {
      await c.query(
        `insert into partners (id, name, created_at, updated_at) values ($1, $1, now(), now())
         on conflict do nothing`,
        [id],
      );
    }
    const started = performance.now();
    await c.query(
      `insert into orders (id, partner_id, status, description, price, start_date, end_date, customer,
         customer_phone, created_at, expires_at, paid_at, payment_method, payment, completed_at, updated_at)
       select 'IAI' || lpad((g - 1)::text, 6, '0') || 'BEN', ($2::text[])[1 + g % 5], 'completed',
         'Asigurare RCA', 100000,
         to_char(current_date - 394 + g % 395, 'YYYY-MM-DD'), to_char(current_date - 30 + g % 395, 'YYYY-MM-DD'),
         '{"phone":"+37369000000"}', '+37369000000', now() - interval '400 days', now(), now(), 'customer',
         '{"receipt_id":"r","transaction_id":"t","paid_at":0,"amount_bani":100000,"currency":"MDL"}',
         now() - interval '400 days', now()
       from generate_series(1, $1::int) g`,
      [ROWS, PARTNERS],
    );
    await c.query(
      `insert into webhook_events (id, partner_id, order_id, status, body, state, attempts, created_at, settled_at)
       select 'evt_' || lpad(to_hex(g), 24, '0'), ($2::text[])[1 + g % 5], 'IAI' || lpad((g - 1)::text, 6, '0') || 'BEN',
         t.type, json_build_object('orderId', 'IAI' || lpad((g - 1)::text, 6, '0') || 'BEN', 'status', t.type)::text,
         'delivered', 1, now() - interval '29 days' + g * (interval '29 days' / $1::int), now()
       from generate_series(1, $1::int) g,
         lateral (select case when g % 20 = 0 then 'refunded' when g % 20 = 1 then 'failed'
                              when g % 50 = 2 then 'expired' else 'completed' end as type) t`,
      [ROWS, PARTNERS],
    );
    console.log(
      `filled ${fmt(ROWS)} orders and ${fmt(ROWS)} events in ${fmt((performance.now() - started) / 1000)} s`,
    );
  } finally {
    await c.end();
  }
}

async function demoEventIds(url: string, n: number): Promise<{ events: string[]; orders: string[] }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string; order_id: string }>(
      `select id, order_id from webhook_events tablesample system (1) where partner_id = 'demo' limit $1`,
      [n],
    );
    return { events: rows.map((r) => r.id), orders: rows.map((r) => r.order_id) };
  } finally {
    await c.end();
  }
}

async function listEvents(url: string): Promise<void> {
  const target = await startPolita({ DATABASE_URL: url, WORKERS: 'false', LOG_LEVEL: 'warn', ...KEYS });
  try {
    const { events, orders } = await demoEventIds(url, 500);
    const rows: [string, Body[]][] = [
      ['pages of 50 after a random cursor', events.map((after) => ({ after, limit: 50 }))],
      ['the same, types ["refunded"]', events.map((after) => ({ after, limit: 50, types: ['refunded'] }))],
      ["one order's events (order_id)", orders.map((order_id) => ({ order_id }))],
    ];
    console.log(
      `\nlist-events, ${CONNECTIONS} connections, ${SECONDS} s each, demo partner (a fifth of the events):`,
    );
    console.log('| Requests | req/s | p50 ms | p99 ms | errors |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    for (const [name, bodies] of rows) {
      const load = signedLoad(target, '/v1/list-events', bodies, CONNECTIONS);
      await warmUp(load);
      const m = timed(await load(SECONDS));
      console.log(`| ${name} | ${fmt(m.rate)} | ${fmt(m.p50Ms, 1)} | ${fmt(m.p99Ms, 1)} | ${m.errors} |`);
    }
  } finally {
    await target.stop();
  }
}

/** A kept database as the fill left it: no order handled by the renewal job, no notice. */
async function unnoticed(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`delete from webhook_events where status = 'expiring'`);
    await c.query(`update orders set renewal_noticed_at = null where renewal_noticed_at is not null`);
    await c.query('vacuum (analyze) orders');
    await c.query('vacuum (analyze) webhook_events');
  } finally {
    await c.end();
  }
}

async function renewalJob(url: string): Promise<void> {
  await unnoticed(url);
  const dataDir = mkdtempSync(join(tmpdir(), 'polita-bench-events-'));
  const service = await startService(
    loadConfig({ DATABASE_URL: url, DATA_DIR: dataDir, SANDBOX: 'true', LOG_LEVEL: 'silent', ...KEYS }),
    { logger: createLogger('silent'), workers: false },
  );
  try {
    const svc = service.svc;
    const run = async (label: string) => {
      const started = performance.now();
      const made = await sendRenewalNotices(svc);
      console.log(`| ${label} | ${fmt(made)} | ${fmt((performance.now() - started) / 1000, 2)} |`);
    };
    console.log(`\nThe renewal job over ${fmt(ROWS)} completed orders (notice 30 days, every partner):`);
    console.log('| Run | expiring events made | seconds |');
    console.log('| --- | ---: | ---: |');
    await run('first run: ended policies marked, the next 30 days noticed');
    await run('the next run, nothing due');
    await svc.db.connection().execute((c) => sql`vacuum orders`.execute(c));
    await run('the same after a vacuum of orders (as autovacuum leaves it)');
    await svc.clock.set((await svc.clock.now()) + 86_400_000);
    await run('the clock one day on: a day of notices');
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * BENCH_EVENTS_DB: a database of one's own to keep (its URL; filled when it holds no orders yet),
 * with BENCH_SECRET_KEY and BENCH_ADMIN_TOKEN, for measuring again or reading the plans; by default a scratch database.
 */
const KEPT = process.env.BENCH_EVENTS_DB;
const ONLY = process.env.BENCH_EVENTS_ONLY; // 'fill': fill and stop; 'list' or 'renewals': that part only
async function measure(url: string, filled: boolean): Promise<void> {
  if (!filled) {
    // The service's first start makes the schema and the demo partner.
    const first = await startPolita({ DATABASE_URL: url, WORKERS: 'false', LOG_LEVEL: 'warn', ...KEYS });
    await first.stop();
    await fill(url);
  }
  if (ONLY === 'fill') return;
  await settle(url);
  if (ONLY !== 'renewals') {
    await listEvents(url);
    await settle(url);
  }
  if (ONLY !== 'list') await renewalJob(url);
}
async function holdsOrders(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: boolean }>(
      `select to_regclass('orders') is not null and exists (select 1 from orders) as n`,
    );
    return rows[0]!.n;
  } catch {
    return false;
  } finally {
    await c.end();
  }
}
if (KEPT) await measure(KEPT, await holdsOrders(KEPT));
else await scratchDatabase(SERVER, 'bench_events', (url) => measure(url, false));
