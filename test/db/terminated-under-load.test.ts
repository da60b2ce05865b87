import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RCA_QUOTE, rcaItem, startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
let orderId = '';
beforeAll(async () => {
  h = await startHarness();
  const quote = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', RCA_QUOTE);
  const created = await h.call<{ id: string }>('create-order', {
    customer: { phone: '+37369123456', name: 'Ion Popescu' },
    products: [rcaItem(quote.body.offers[0]!.min_start_date)],
  });
  orderId = created.body.id;
});
afterAll(() => h?.close());

/**
 * PostgreSQL ending the service's sessions (pg_terminate_backend, as a failover or an administrator
 * does) while partners read: a request that lands on a session just ended runs again on a fresh one
 * instead of answering 500 (decision 0018). The service stays up throughout.
 */
describe('sessions terminated under load', () => {
  it('cost no read a 500', async () => {
    const admin = new pg.Client({ connectionString: h.service.database.connectionString });
    await admin.connect();
    const statuses: Record<number, number> = {};
    const failures: unknown[] = [];
    let running = true;
    let kills = 0;
    const killer = (async () => {
      while (running) {
        const { rows } = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
        );
        kills += rows.length;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const clients = Array.from({ length: 10 }, async (_, k) => {
      for (let i = 0; running; i++) {
        const res =
          (i + k) % 2 === 0 ? await h.call('get-order', { id: orderId }) : await h.call('get-balance', {});
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status !== 200 && failures.length < 5) failures.push(res.body);
      }
    });
    await new Promise((r) => setTimeout(r, 3000));
    running = false;
    await Promise.all([killer, ...clients]);
    await admin.end();
    console.log(`sessions terminated: ${kills}; answers by status ${JSON.stringify(statuses)}`);
    expect(kills).toBeGreaterThan(50);
    expect(failures).toEqual([]);
    expect(statuses[200]).toBeGreaterThan(100);
  }, 30_000);
});
