import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Db } from '../src/db/database.ts';

/**
 * `npm run seed:orders -- --orders 1000000 [--partner demo]`: fills the database the service uses
 * (same environment: DATABASE_URL, or the embedded server of DATA_DIR, joined when a service runs
 * it) until it holds at least `--orders` orders, with their items: what get-order reads. Run it
 * again with a larger number to add the difference.
 *
 * The orders are varied as a partner network's would be: a fifth of them the `--partner`'s (which
 * must exist: the sandbox creates `demo` on the service's first start), the rest spread over four
 * partners made here (`seed-1` … `seed-4`); RCA, green card, medical and EU vignette products, one
 * in ten orders with a second item; 70 % completed (issued fields and a file token, no PDF in
 * `documents`), then expired, draft, paid, processing, failed and refunded ones; created over the
 * past year (drafts in the past 12 h). Ids have the service's shape, from a hash of a random salt
 * and a counter, so their index is filled in random order as the service's would be. No
 * order_events, ledger entries or webhooks are made: get-order reads none of them.
 *
 * INSERT … SELECT generate_series, BATCH orders a statement, each in its own transaction, with
 * synchronous_commit off for this session only.
 */
const BATCH = 50_000;
export const SEED_PARTNERS = ['seed-1', 'seed-2', 'seed-3', 'seed-4'];

export interface SeedResult {
  added: number;
  total: number;
  seconds: number;
}

export async function seedOrders(
  db: Db,
  opts: { orders: number; partner: string; log?: (line: string) => void },
): Promise<SeedResult> {
  const log = opts.log ?? (() => {});
  const started = performance.now();
  return db.connection().execute(async (conn) => {
    const owner = await conn
      .selectFrom('partners')
      .select('id')
      .where('id', '=', opts.partner)
      .executeTakeFirst();
    if (!owner) {
      throw new Error(
        `partner ${opts.partner} does not exist: start the service once (the sandbox creates demo) or create it with npm run admin`,
      );
    }
    await sql`set synchronous_commit = off`.execute(conn);
    const now = new Date();
    for (const id of SEED_PARTNERS) {
      await conn
        .insertInto('partners')
        .values({ id, name: `Seeded partner ${id}`, webhook_url: null, created_at: now, updated_at: now })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    const partners = [opts.partner, ...SEED_PARTNERS];
    const count = async () =>
      Number((await sql<{ n: number }>`select count(*)::int as n from orders`.execute(conn)).rows[0]!.n);
    const before = await count();
    let total = before;
    const salt = randomBytes(8).toString('hex');
    for (let n = 0; total < opts.orders; n += BATCH) {
      const size = Math.min(BATCH, opts.orders - total);
      total += await insertBatch(conn, salt, n, n + size - 1, partners);
      log(`  ${total} orders (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await sql`analyze orders`.execute(conn);
    await sql`analyze order_items`.execute(conn);
    return { added: total - before, total, seconds: (performance.now() - started) / 1000 };
  });
}

/** Orders `from`…`to` of this salt and their items, in one statement; answers how many orders went in. */
async function insertBatch(db: Db, salt: string, from: number, to: number, partners: string[]) {
  const { rows } = await sql<{ n: number }>`
    with g as (
      select n, decode(md5(${salt} || n::text), 'hex') as h, random() as r, random() as r2
      from generate_series(${from}::int, ${to}::int) as n
    ), x as materialized (
      select
        chr(65 + get_byte(h, 0) % 26) || chr(65 + get_byte(h, 1) % 26) || chr(65 + get_byte(h, 2) % 26) ||
          lpad(((get_byte(h, 3) * 65536 + get_byte(h, 4) * 256 + get_byte(h, 5)) % 1000000)::text, 6, '0') ||
          chr(65 + get_byte(h, 6) % 26) || chr(65 + get_byte(h, 7) % 26) || chr(65 + get_byte(h, 8) % 26) as id,
        (${partners}::text[])[1 + n % ${partners.length}] as partner_id,
        (array['rca', 'rca', 'rca', 'rca', 'rca', 'green-card', 'green-card', 'medical', 'medical',
               'vignette:eu'])[1 + get_byte(h, 9) % 10] as product,
        get_byte(h, 10) < 26 as two_items,
        case when r < 0.70 then 'completed' when r < 0.80 then 'expired' when r < 0.85 then 'draft'
             when r < 0.88 then 'paid' when r < 0.90 then 'processing' when r < 0.96 then 'failed'
             else 'refunded' end as status,
        (30000 + (get_byte(h, 11) * 256 + get_byte(h, 12)) * 4)::bigint as price,
        '1' || lpad((n % 100000000)::text, 8, '0') as vehicle,
        '+3736' || lpad((n % 10000000)::text, 7, '0') as phone,
        n, r2
      from g
    ), t as (
      select x.*,
        case when status = 'draft' then now() - r2 * interval '12 hours'
             else now() - r2 * interval '365 days' end as created_at,
        case when product = 'vignette:eu' then 30 when product = 'medical' then 10 else 365 end as days
      from x
    ), o as (
      insert into orders (id, partner_id, status, description, price, currency, start_date, end_date,
        customer, created_at, expires_at, paid_at, payment_method, payment, completed_at, updated_at,
        failure_reason)
      select id, partner_id, status,
        case product when 'rca' then 'RCA ' || vehicle when 'green-card' then 'Carte Verde ' || vehicle
          when 'medical' then 'Asigurare medicală de călătorie' else 'Vinietă EU ' || vehicle end,
        price, 'MDL',
        to_char(created_at + interval '1 day', 'YYYY-MM-DD'),
        to_char(created_at + make_interval(days => days), 'YYYY-MM-DD'),
        jsonb_build_object('phone', phone, 'name', 'Client ' || n),
        created_at, created_at + interval '1 day',
        case when status not in ('draft', 'expired') then created_at + interval '2 minutes' end,
        case when status in ('draft', 'expired') then null when n % 5 < 3 then 'wallet' else 'customer' end,
        case when status not in ('draft', 'expired') then jsonb_build_object(
          'receipt_id', 'R' || id, 'transaction_id', 'T' || id,
          'paid_at', (extract(epoch from created_at) * 1000)::bigint, 'amount_bani', price, 'currency', 'MDL') end,
        case when status in ('completed', 'refunded') then created_at + interval '3 minutes' end,
        created_at + interval '3 minutes',
        case status when 'failed' then 'The policy could not be issued: the provider did not answer after several attempts.'
          when 'refunded' then 'Refunded at the customer''s request.' end
      from t
      on conflict (id) do nothing
      returning id
    ), i as (
      insert into order_items (order_id, idx, product, price, description, start_date, end_date, details,
        issued, file_token)
      select t.id, k, p, case when two_items then t.price / 2 else t.price end,
        case p when 'medical' then 'Asigurare medicală' else upper(p) || ' ' || vehicle end,
        to_char(created_at + interval '1 day', 'YYYY-MM-DD'),
        to_char(created_at + make_interval(days => days), 'YYYY-MM-DD'),
        jsonb_build_object('product', p, 'vehicle', vehicle, 'duration', days, 'idnx', '2003000000016',
          'insurance_company', 'moldasig', 'tariff', jsonb_build_object('base_premium', t.price / 3, 'bonus_malus', 'B5')),
        case when status in ('completed', 'refunded') then jsonb_build_object(
          'product', p, 'policy_number', 'POL' || t.id || k, 'insurance_company', 'moldasig', 'vehicle', vehicle,
          'start_date', to_char(created_at + interval '1 day', 'YYYY-MM-DD'),
          'end_date', to_char(created_at + make_interval(days => days), 'YYYY-MM-DD'),
          'price', round(t.price / 100.0, 2)) end,
        case when status in ('completed', 'refunded') then encode(sha256((t.id || ':' || k)::bytea), 'hex') end
      from t join o using (id)
        cross join lateral (select 0 as k, t.product as p
                            union all select 1, 'medical' where t.two_items) as items
      returning 1
    )
    select (select count(*) from o)::int as n`.execute(db);
  return rows[0]!.n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { orders: { type: 'string' }, partner: { type: 'string', default: 'demo' } },
  });
  const orders = Number(values.orders);
  if (!Number.isSafeInteger(orders) || orders < 1) {
    throw new Error('usage: npm run seed:orders -- --orders <count> [--partner <id>]');
  }
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    joinRunning: true,
  });
  try {
    const r = await seedOrders(database.db, { orders, partner: values.partner, log: console.log });
    console.log(`added ${r.added} orders in ${r.seconds.toFixed(1)} s: the database holds ${r.total}`);
  } finally {
    await database.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(`seed:orders: ${(err as Error).message}`);
    process.exitCode = 2;
  });
}
