import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  eventually,
  payment,
  postgresProcessesOn,
  rcaDraft,
  removeDataDir,
  runReconcile,
  sleep,
  spawnService,
  type ServiceProcess,
} from './process.ts';
import { testDatabaseUrl } from '../support/database.ts';

const CLIENTS = 8;
/** Payments acknowledged before the kill, at least. */
const ACKNOWLEDGED = 30;

const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
const procs: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  for (const d of dirs) await removeDataDir(d);
  for (const drop of drops) await drop();
}, 60_000);

/**
 * The embedded default under a crash (decision 0017): clients create drafts and pay them, half by
 * confirm-order and half from the wallet, until the service's whole process group is SIGKILLed.
 * Its PostgreSQL runs in a session of its own and survives that; in the second case every
 * postgres process is SIGKILLed too, mid-write, and the server must recover from its WAL.
 */
describe.each([
  { what: 'the service’s process group', alsoServer: false, external: false },
  { what: 'the service’s process group and every PostgreSQL process', alsoServer: true, external: false },
  {
    what: 'the service’s process group, on a PostgreSQL server (DATABASE_URL)',
    alsoServer: false,
    external: true,
  },
])('SIGKILL of $what under a mixed payment load', ({ what, alsoServer, external }) => {
  it('loses no acknowledged payment; the next start completes every paid order and the books reconcile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polita-kill-'));
    dirs.push(dir);
    let env: { DATA_DIR: string } | { DATABASE_URL: string } = { DATA_DIR: dir };
    if (external) {
      const db = await testDatabaseUrl();
      drops.push(db.drop);
      env = { DATABASE_URL: db.url };
    }
    const first = await spawnService(env, { ownGroup: true });
    procs.push(first);
    const credited = await first.admin('POST', '/admin/partners/demo/wallet/credits', {
      wallet: 'online',
      amount: 5_000_000,
      reference: 'load test',
    });
    expect(credited.status, JSON.stringify(credited.body)).toBe(200);

    const acknowledged = new Map<string, 'customer' | 'wallet'>();
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, k) => {
      for (let i = k; running; i++) {
        try {
          const draft = await rcaDraft(first);
          const wallet = i % 2 === 0;
          const r = wallet
            ? await first.call('pay-order-from-balance', { id: draft.id })
            : await first.call('confirm-order', { id: draft.id, payment: payment(draft.price) });
          if (r.status === 200) acknowledged.set(draft.id, wallet ? 'wallet' : 'customer');
          else throw new Error(`payment answered ${r.status}: ${JSON.stringify(r.body)}`);
        } catch (err) {
          if (running) throw err;
          return; // the kill cut this request off: its outcome is unknown, and not counted
        }
      }
    });
    await eventually('payments to be acknowledged', async () =>
      acknowledged.size >= ACKNOWLEDGED ? true : undefined,
    );

    const server = postgresProcessesOn(dir);
    if (!external) expect(server.length, 'the embedded PostgreSQL runs').toBeGreaterThan(0);
    running = false;
    process.kill(-first.child.pid!, 'SIGKILL');
    // A backend whose session the service's death just ended may be gone already (ESRCH): as killed as wanted.
    if (alsoServer) for (const pid of server) killUnlessGone(pid);
    await first.exited;
    await Promise.all(clients);
    const paid = new Map(acknowledged);
    if (!alsoServer && !external) {
      expect(postgresProcessesOn(dir)[0], 'the server outlived its service').toBe(server[0]);
    }

    const second = await spawnService(env);
    procs.push(second);
    if (alsoServer) {
      const log = readFileSync(join(dir, 'postgresql.log'), 'utf8');
      expect(log).toMatch(/database system was interrupted|not properly shut down/);
    } else if (!external) {
      expect(second.output()).toContain(`stopping the PostgreSQL server (pid ${server[0]})`);
    }

    for (const [id, how] of paid) {
      const done = await eventually(
        `order ${id} (paid by ${how}) to complete after the restart`,
        async () => {
          const r = await second.call<{ status: string }>('get-order', { id });
          return r.body.status === 'completed' ? r : undefined;
        },
        60_000,
      );
      expect(done.status).toBe(200);
    }
    console.log(`SIGKILL of ${what}: ${paid.size} payments acknowledged before it, all completed after`);
    // Every wallet-paid order has its ledger entry, and the wallet equals its ledger to the ban.
    await sleep(500);
    const books = await runReconcile(env);
    expect(books, books.output).toMatchObject({ code: 0 });

    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(postgresProcessesOn(dir), 'SIGTERM leaves no postgres process behind').toEqual([]);
  }, 180_000);
});

function killUnlessGone(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
