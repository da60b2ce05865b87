import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { BackupUnavailable, findPgTool } from '../../src/db/backup.ts';
import { embeddedConnectionString, startEmbeddedServer } from '../../src/db/embedded-server.ts';
import {
  eventually,
  freePort,
  payment,
  rcaDraft,
  removeDataDir,
  ROOT,
  runReconcile,
  spawnService,
  type ServiceProcess,
} from '../multiprocess/process.ts';
import { testDatabaseUrl } from '../support/database.ts';
import { TEST_SECRET_KEY } from '../support/harness.ts';

/**
 * `npm run admin -- backup` under payment load, restored elsewhere with `restore` (decision 0055):
 * everything acknowledged before the backup began is in the copy, the partner secrets open with
 * the same key, the pending jobs are there and run, and the books reconcile. pg_dump and
 * pg_restore come from Debian's postgresql-client-15, which CI installs; without them these tests
 * say so and skip, except under CI, where their absence fails.
 *
 * One leg a run, on the run's database: the embedded server of a DATA_DIR, or (DATABASE_URL set)
 * databases on that server. The second CI run covers the other.
 */
const tools = (() => {
  try {
    return { pgDump: findPgTool('pg_dump', 15), pgRestore: findPgTool('pg_restore', 15) };
  } catch (err) {
    if (process.env.CI) throw err;
    console.warn(`backup tests skipped: ${(err as Error).message}`);
    return undefined;
  }
})();

const onServer = Boolean(process.env.DATABASE_URL);
const CLIENTS = 6;
const ACKNOWLEDGED = 30;

const cleanups: (() => Promise<void>)[] = [];
const procs: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  for (const c of cleanups.reverse()) await c();
}, 60_000);

type Env = { DATA_DIR: string; DATABASE_URL?: string; SECRET_KEY?: string; WEBHOOK_RETRY_SCHEDULE?: string };

/** A place for the service's data: a DATA_DIR of its own, or a database on the run's server. */
async function place(opts: { empty: boolean }): Promise<{ env: Env; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'polita-backup-'));
  cleanups.push(() => removeDataDir(dir));
  if (!onServer) return { env: { DATA_DIR: dir }, url: embeddedConnectionString(dir), dir };
  const db = await testDatabaseUrl(opts);
  cleanups.push(db.drop);
  return { env: { DATABASE_URL: db.url, DATA_DIR: dir, SECRET_KEY: TEST_SECRET_KEY }, url: db.url, dir };
}

/** `npm run admin -- …` as a child process on the database `env` names. */
function admin(env: Env, ...args: string[]) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...env };
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['src/cli/admin.ts', ...args], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

interface Snapshot {
  orders: string[];
  ledger: string[];
  secrets: string[];
  jobs: string[];
}

/** What the source holds that the copy must hold too, each row as text to compare whole. */
async function snapshot(url: string, acknowledged: Iterable<string>): Promise<Snapshot> {
  const rows = async (text: string) => (await query<{ r: string }>(url, text)).map((x) => x.r);
  return {
    orders: [...acknowledged],
    ledger: await rows(
      `select concat_ws('|', id, partner_id, wallet, kind, amount, balance_after, order_id) as r from ledger_entries`,
    ),
    secrets: await rows(
      `select concat_ws('|', id, partner_id, secret_enc, retired_at) as r from partner_secrets`,
    ),
    // Jobs waiting to run; by the time the backup reads them some may have run, and are kept as completed.
    jobs: await rows(
      `select concat_ws('|', name, id) as r from pgboss.job where state in ('created', 'retry')`,
    ),
  };
}

describe.skipIf(!tools)(`backup and restore (${onServer ? 'DATABASE_URL' : 'embedded DATA_DIR'})`, () => {
  it('a backup under payment load restores everything acknowledged before it, secrets open, books reconcile', async () => {
    const source = await place({ empty: false });
    // Webhooks to a loopback port nobody listens on, retried in an hour: their next attempts are
    // jobs that wait in the queue, as a partner's unreachable endpoint leaves them.
    const env = { ...source.env, WEBHOOK_RETRY_SCHEDULE: '3600' };
    const first = await spawnService(env);
    procs.push(first);
    const hook = await first.admin('PATCH', '/admin/partners/demo', {
      webhook_url: `http://127.0.0.1:${await freePort()}/hook`,
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const credited = await first.admin('POST', '/admin/partners/demo/wallet/credits', {
      wallet: 'online',
      amount: 5_000_000,
      reference: 'backup test',
    });
    expect(credited.status, JSON.stringify(credited.body)).toBe(200);

    const acknowledged = new Set<string>();
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, k) => {
      for (let i = k; running; i++) {
        const draft = await rcaDraft(first);
        const r =
          i % 2 === 0
            ? await first.call('pay-order-from-balance', { id: draft.id })
            : await first.call('confirm-order', { id: draft.id, payment: payment(draft.price) });
        if (r.status !== 200) throw new Error(`payment answered ${r.status}: ${JSON.stringify(r.body)}`);
        acknowledged.add(draft.id);
      }
    });
    await eventually('payments to be acknowledged', async () =>
      acknowledged.size >= ACKNOWLEDGED ? true : undefined,
    );
    // Webhooks of completed orders have failed once and wait for their next attempt, an hour on
    // (a first attempt's job, due now, may be taken any moment).
    await eventually('a webhook attempt to wait in the queue', async () => {
      const [row] = await query<{ n: number }>(
        source.url,
        `select count(*)::int as n from pgboss.job
          where name = 'deliver-webhook' and state = 'created' and start_after > now() + interval '10 minutes'`,
      );
      return row!.n > 0 ? true : undefined;
    });

    const before = await snapshot(source.url, acknowledged);
    const file = join(source.dir, 'polita.dump');
    const backup = await admin(env, 'backup', file);
    const during = acknowledged.size - before.orders.length;
    running = false;
    await Promise.all(clients);
    expect(backup, backup.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(backup.stdout)).toMatchObject({ file, postgresql: 15 });
    console.log(`${before.orders.length} payments acknowledged before the backup, ${during} while it ran`);
    // A restore needs the service stopped: into the DATA_DIR it runs on, it is refused at once.
    if (!onServer) {
      const busy = await admin(env, 'restore', file);
      expect(busy.code, busy.stderr).toBe(1);
      expect(busy.stderr).toMatch(/restore refused: DATA_DIR .* is in use by a running service/);
    }
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const target = await place({ empty: true });
    if (!onServer) {
      // The sandbox's key lives in its DATA_DIR: kept beside the backup, it goes beside the copy.
      mkdirSync(target.dir, { recursive: true });
      copyFileSync(join(source.dir, 'secret.key'), join(target.dir, 'secret.key'));
    }
    const restored = await admin(target.env, 'restore', file);
    expect(restored, restored.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(restored.stdout).secrets).toMatch(/^every partner secret opens with/);

    // The restored DATA_DIR's server, for reading the copy before any service touches it.
    const server = onServer ? undefined : await startEmbeddedServer({ dataDir: target.dir });
    cleanups.push(async () => server?.stop());
    const after = await snapshot(target.url, []);
    const has = async (text: string) =>
      new Set((await query<{ r: string }>(target.url, text)).map((x) => x.r));
    const orders = await has(
      `select id as r from orders where status in ('paid', 'processing', 'completed', 'failed', 'refunded')`,
    );
    const jobs = await has(`select concat_ws('|', name, id) as r from pgboss.job`);
    expect(before.orders.filter((id) => !orders.has(id))).toEqual([]);
    expect(before.ledger.filter((r) => !after.ledger.includes(r))).toEqual([]);
    expect(before.secrets.filter((r) => !after.secrets.includes(r))).toEqual([]);
    expect(before.jobs.filter((r) => !jobs.has(r))).toEqual([]);
    expect(before.jobs.some((r) => r.startsWith('deliver-webhook|'))).toBe(true);

    const books = await runReconcile(target.env);
    expect(books, books.output).toMatchObject({ code: 0 });
    await server?.stop();

    // The copy serves: the demo partner's secret (sealed under the same key) signs, and every paid
    // order completes from the jobs the backup carried.
    const second = await spawnService({ ...target.env, WEBHOOK_RETRY_SCHEDULE: '3600' });
    procs.push(second);
    second.demo.secret = first.demo.secret;
    for (const id of before.orders) {
      await eventually(
        `order ${id} to complete on the restored copy`,
        async () => {
          const r = await second.call<{ status: string }>('get-order', { id });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          return r.body.status === 'completed' ? true : undefined;
        },
        60_000,
      );
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });

    // A target that is not empty any more is refused, and left as it was.
    const again = await admin(target.env, 'restore', file);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/restore refused: the (DATA_DIR|database) .* is not empty/);
  }, 240_000);
});

describe('finding pg_dump and pg_restore', () => {
  it('names the package to install when no PostgreSQL 15 tool is found', () => {
    const empty = mkdtempSync(join(tmpdir(), 'polita-nopg-'));
    try {
      expect(() => findPgTool('pg_dump', 15, { dirs: [empty], path: empty })).toThrow(BackupUnavailable);
      expect(() => findPgTool('pg_restore', 15, { dirs: [empty], path: empty })).toThrow(
        /apt-get install postgresql-client-15/,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
