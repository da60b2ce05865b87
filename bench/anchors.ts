import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { quantile } from './scenarios.ts';

/**
 * The anchors the write rows are taken against, measured on the same PostgreSQL server as the
 * service, in the same run, with the same 50 connections: pgbench's TPC-B, and a bare wallet-payment
 * transaction. Each runs in a scratch database of that server, dropped afterwards.
 */
export interface Anchor {
  /** What was measured, for the table's anchor cell and its own row. */
  name: string;
  rate: number;
  unit: 'tps' | 'tx/s';
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** `url` with its database replaced by `name` (postgres://…/db?… and the embedded socket URL alike). */
export function withDatabase(url: string, name: string): string {
  const m = /^(postgres(?:ql)?:\/\/[^/]*\/)([^?]*)(.*)$/.exec(url);
  if (!m) throw new Error(`not a PostgreSQL URL: ${url}`);
  return `${m[1]}${name}${m[3]}`;
}

/** A database made on `server` (a maintenance-database URL) for `use`, dropped after it. */
export async function scratchDatabase<T>(
  server: string,
  prefix: string,
  use: (url: string) => Promise<T>,
): Promise<T> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    try {
      // Closed pools' sessions end first: a forced drop of a session still closing surfaces as an
      // error on its client.
      for (let i = 0; statement.startsWith('drop') && i < 50; i++) {
        const { rows } = await c.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where datname = $1',
          [name],
        );
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  try {
    return await use(withDatabase(server, name));
  } finally {
    await admin(`drop database if exists ${name} with (force)`);
  }
}

/**
 * Brings a database to a steady state before a measured window: VACUUM (ANALYZE) of its tables,
 * then a CHECKPOINT of its server. A setup's bulk writes (pgbench -i at scale 50, 20 000 drafts, a
 * million seeded orders) otherwise set off a checkpoint and autovacuum that run under whichever
 * window comes next, anchor or scenario, and decide its figure: pay-from-balance measured 54 % of
 * its anchor in the full run and 63 % alone. Every window, anchors' and scenarios' alike, starts
 * after this; a service runs on a vacuumed, checkpointed database in its steady state too.
 */
export async function settle(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('vacuum (analyze)');
    await c.query('checkpoint');
  } finally {
    await c.end();
  }
}

/**
 * The scale the create + confirm row is judged at: 1, pgbench's default (`pgbench -i`), the scale
 * decision 0022's anchor was first measured at. At scale 1 the 50 clients' TPC-B
 * transactions all update one branches row, so it measures that row's lock as much as the server.
 * The row also shows scale 50 ({@link PGBENCH_SCALE_WIDE}), where each client has its own branch
 * as TPC-B prescribes: the stronger anchor, about twice the tps here. -i takes about 9 s at 50
 * (server-side generation).
 */
export const PGBENCH_SCALE = Number(process.env.BENCH_PGBENCH_SCALE || 1);
export const PGBENCH_SCALE_WIDE = 50;
const PGBENCH = process.env.BENCH_PGBENCH || 'pgbench';

/** pgbench TPC-B at `scale`, prepared statements, `clients` connections over 2 threads, for `seconds`. */
export async function pgbenchTpcb(
  server: string,
  seconds: number,
  clients: number,
  scale: number,
): Promise<Anchor> {
  return scratchDatabase(server, 'polita_pgbench', async (url) => {
    await run(PGBENCH, ['-i', '-q', '-s', String(scale), '-I', 'dtGvp', url]);
    await settle(url);
    // Per-transaction latencies go to log files (µs in the third column), for p50 and p99.
    const logs = mkdtempSync(join(tmpdir(), 'polita-pgbench-'));
    try {
      const out = await run(PGBENCH, [
        ...['-c', String(clients), '-j', '2', '-T', String(seconds), '-M', 'prepared'],
        ...['-l', `--log-prefix=${join(logs, 'tx')}`, url],
      ]);
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
      if (!tps) throw new Error(`pgbench printed no tps:\n${out}`);
      const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
      const latencies: number[] = [];
      for (const file of readdirSync(logs)) {
        for (const line of readFileSync(join(logs, file), 'utf8').split('\n')) {
          const us = line.split(' ')[2];
          if (us) latencies.push(Number(us) / 1000);
        }
      }
      latencies.sort((a, b) => a - b);
      return {
        name: `pgbench TPC-B, scale ${scale}`,
        rate: Number(tps[1]),
        unit: 'tps',
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        errors: failed,
      };
    } finally {
      rmSync(logs, { recursive: true, force: true });
    }
  });
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}:\n${out.slice(-2000)}`)),
    );
  });
}

/**
 * What a wallet payment must write, on tables shaped as the service's (src/db/migrations/): the
 * order with its indexes (a draft leaves the partial index of open drafts, so the update is not
 * HOT), its state-machine event, the wallet, the ledger with its index, and a job row standing for
 * pg-boss's issue-order job with its singleton key.
 */
const WALLET_SCHEMA = `
create table wallets (
  partner_id text primary key,
  online bigint not null check (online >= 0),
  updated_at timestamptz not null
);
create table orders (
  id text primary key,
  partner_id text not null references wallets(partner_id),
  status text not null,
  price bigint not null,
  customer jsonb not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  paid_at timestamptz,
  payment_method text,
  payment jsonb,
  updated_at timestamptz not null
);
create index orders_partner_created on orders (partner_id, created_at desc, id desc);
create index orders_created on orders (created_at desc, id desc);
create index orders_open_drafts on orders (expires_at) where status = 'draft';
create table order_events (
  id bigserial primary key,
  order_id text not null references orders(id),
  from_status text,
  to_status text not null,
  reason text,
  actor text not null,
  at timestamptz not null
);
create index order_events_order on order_events (order_id, id);
create table ledger_entries (
  id bigserial primary key,
  partner_id text not null references wallets(partner_id),
  wallet text not null,
  amount bigint not null,
  balance_after bigint not null,
  kind text not null,
  order_id text references orders(id),
  reference text,
  actor text not null,
  created_at timestamptz not null
);
create index ledger_partner on ledger_entries (partner_id, id);
create table jobs (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  data jsonb not null,
  singleton_key text,
  state text not null default 'created',
  created_on timestamptz not null default now()
);
create unique index jobs_singleton on jobs (name, singleton_key) where state < 'completed';
`;

/** The payment's statements, as named (prepared) queries. */
const PAY = {
  order: {
    name: 'pay_order',
    text: `update orders set status = 'paid', payment_method = 'wallet', payment = $2, paid_at = $3, updated_at = $3
           where id = $1 and status = 'draft' returning price, partner_id`,
  },
  event: {
    name: 'pay_event',
    text: `insert into order_events (order_id, from_status, to_status, reason, actor, at)
           values ($1, 'draft', 'paid', 'wallet payment', $2, $3)`,
  },
  job: {
    name: 'pay_job',
    text: `insert into jobs (name, data, singleton_key) values ('issue-order', $1, $2)`,
  },
  wallet: {
    name: 'pay_wallet',
    text: `update wallets set online = online - $2, updated_at = $3
           where partner_id = $1 and online >= $2 returning online`,
  },
  ledger: {
    name: 'pay_ledger',
    text: `insert into ledger_entries (partner_id, wallet, amount, balance_after, kind, order_id, actor, created_at)
           values ($1, 'online', -$2::bigint, $3, 'payment', $4, $5, $6)`,
  },
};

/** One window of the bare wallet payment: the payments it made, its length, their latencies. */
export interface WalletWindow {
  done: number;
  seconds: number;
  /** Milliseconds, in the order they finished. */
  latencies: number[];
  errors: number;
}

/**
 * The bare wallet payment: over `connections` clients (a pg Pool's worth, one loop each), as fast
 * as they go, BEGIN; the draft → paid (guarded by status = 'draft'); its event; the issuance job;
 * the wallet debited where it covers the price, returning the balance; the ledger entry; COMMIT.
 * Seven round trips, no HTTP, no auth, no JSON body, no ORM. The drafts are spread over `wallets`
 * wallets in turn (1: every payment queues on one wallet row). A scratch database of `server` is
 * filled and settled, one unmeasured second connects and prepares, then `use` takes windows of it
 * (`window(seconds)`), in turn with whatever else it measures; the database is dropped after.
 * `seconds` is the measured time in all, for how many drafts to make.
 */
export async function withWalletTx<T>(
  server: string,
  o: { connections: number; wallets: number; seconds: number },
  use: (window: (seconds: number) => Promise<WalletWindow>) => Promise<T>,
): Promise<T> {
  return scratchDatabase(server, 'polita_wallet_tx', async (url) => {
    const pool = new pg.Pool({ connectionString: url, max: o.connections });
    // An idle client the server drops (another session's pg_terminate_backend) must not end the bench.
    pool.on('error', () => {});
    try {
      await pool.query(WALLET_SCHEMA);
      // More drafts than the fastest run could pay; a run that pays them all stops early.
      const drafts = Math.max(50_000, 8000 * (o.seconds + 1));
      await pool.query(
        `insert into wallets select 'p' || w, 1e15::bigint, now() from generate_series(0, $1::int - 1) w`,
        [o.wallets],
      );
      await pool.query(
        `insert into orders (id, partner_id, status, price, customer, created_at, expires_at, updated_at)
         select 'O' || n, 'p' || (n % $2::int), 'draft', 123456, '{"phone":"+37360000000"}', now(), now() + interval '1 day', now()
         from generate_series(0, $1::int - 1) n`,
        [drafts, o.wallets],
      );
      await settle(url);
      let next = 0;
      const pay = async (client: pg.PoolClient, id: string) => {
        const at = new Date();
        const actor = `partner:${id}`;
        await client.query('begin');
        try {
          const payment = JSON.stringify({ transaction_id: `wallet:${id}`, amount_bani: 123456 });
          const order = await client.query<{ price: string; partner_id: string }>({
            ...PAY.order,
            values: [id, payment, at],
          });
          const row = order.rows[0];
          if (!row) throw new Error(`order ${id} is not a draft`);
          await client.query({ ...PAY.event, values: [id, actor, at] });
          await client.query({ ...PAY.job, values: [JSON.stringify({ orderId: id }), `issue:${id}`] });
          const w = await client.query<{ online: string }>({
            ...PAY.wallet,
            values: [row.partner_id, row.price, at],
          });
          if (!w.rows[0]) throw new Error('insufficient balance');
          await client.query({
            ...PAY.ledger,
            values: [row.partner_id, row.price, w.rows[0].online, id, actor, at],
          });
          await client.query('commit');
        } catch (err) {
          await client.query('rollback');
          throw err;
        }
      };
      const window = async (seconds: number): Promise<WalletWindow> => {
        const latencies: number[] = [];
        let errors = 0;
        const started = performance.now();
        const stopAt = started + seconds * 1000;
        const loop = async () => {
          const client = await pool.connect();
          try {
            while (performance.now() < stopAt && next < drafts) {
              const id = `O${next++}`;
              const t0 = performance.now();
              try {
                await pay(client, id);
                latencies.push(performance.now() - t0);
              } catch {
                errors++;
              }
            }
          } finally {
            client.release();
          }
        };
        await Promise.all(Array.from({ length: o.connections }, loop));
        return { done: latencies.length, seconds: (performance.now() - started) / 1000, latencies, errors };
      };
      await window(1); // warm-up: connect, prepare
      return await use(window);
    } finally {
      await pool.end();
    }
  });
}

/** Windows of the bare wallet payment as one anchor: all payments over all their time, latencies pooled. */
export function walletAnchor(wallets: number, windows: WalletWindow[]): Anchor & { drift: number } {
  const seconds = windows.reduce((n, w) => n + w.seconds, 0);
  const done = windows.reduce((n, w) => n + w.done, 0);
  const latencies = windows.flatMap((w) => w.latencies).sort((a, b) => a - b);
  const rates = windows.map((w) => w.done / w.seconds);
  return {
    name: `bare wallet tx, ${wallets === 1 ? 'one wallet' : `${wallets} wallets`}`,
    rate: done / seconds,
    unit: 'tx/s',
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    errors: windows.reduce((n, w) => n + w.errors, 0),
    drift: (Math.max(...rates) - Math.min(...rates)) / (done / seconds),
  };
}
