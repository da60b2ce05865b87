import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileIfDue, reconciliationStatus, startReconciler } from '../../src/app/reconcile-schedule.ts';
import { localDate } from '../../src/domain/time.ts';
import { createLogger } from '../../src/log.ts';
import { freePort } from '../multiprocess/process.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * What ops/prometheus-rules.yml alerts on is what /metrics exposes (decision 0056): every `polita_*`
 * name the rules use appears in a scrape, and the ones this file owns read what they say.
 */
const rules = readFileSync(new URL('../../ops/prometheus-rules.yml', import.meta.url), 'utf8');

let h: Harness;
const log = createLogger('silent');
beforeAll(async () => {
  // No workers: paid orders stay paid, and reconciliation runs only when a test asks.
  h = await startHarness({ workers: false });
});
afterAll(() => h?.close());

async function scrape(): Promise<string> {
  const res = await h.service.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${h.service.adminToken}` },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}

const value = (text: string, name: string) => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

describe('the metrics the alerting rules use', () => {
  it('are all exposed', async () => {
    const used = new Set([...rules.matchAll(/\b(polita_[a-z_]+)\b/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(3);
    const text = await scrape();
    // A sample of each, not only its HELP and TYPE: the rule has a value to read.
    const exposed = new Set([...text.matchAll(/^(polita_[a-z_]+)[{ ]/gm)].map((m) => m[1]!));
    const missing = [...used].filter((n) => !exposed.has(n));
    expect(missing).toEqual([]);
  });

  it('tell the age of the oldest paid order not yet issued', async () => {
    expect(value(await scrape(), 'polita_issuance_backlog_oldest_seconds')).toBe(0);
    const id = await paidRcaOrder(h, h.demo, localDate(await h.service.svc.clock.now()));
    // Ten minutes on by the sandbox clock, with no worker to issue it.
    const later = new Date((await h.service.svc.clock.now()) + 600_000).toISOString();
    expect((await h.admin('PUT', '/admin/sandbox/clock', { now: later })).status).toBe(200);
    try {
      const age = value(await scrape(), 'polita_issuance_backlog_oldest_seconds')!;
      expect(age).toBeGreaterThanOrEqual(600);
      expect(age).toBeLessThan(700);
      // Issued, it no longer counts.
      await h.service.svc.db.updateTable('orders').set({ status: 'failed' }).where('id', '=', id).execute();
      expect(value(await scrape(), 'polita_issuance_backlog_oldest_seconds')).toBe(0);
    } finally {
      await h.admin('DELETE', '/admin/sandbox/clock');
    }
  });

  it('tell the last reconciliation: when it began and what it found, once an interval across instances', async () => {
    const db = h.service.svc.db;
    expect(value(await scrape(), 'polita_reconciliation_last_run_timestamp_seconds')).toBe(0);
    expect(await reconcileIfDue(db, 600, log)).toBe('ran');
    let text = await scrape();
    const ranAt = value(text, 'polita_reconciliation_last_run_timestamp_seconds')!;
    expect(Math.abs(ranAt - Date.now() / 1000)).toBeLessThan(60);
    expect(value(text, 'polita_reconciliation_differences')).toBe(0);
    // Another instance looking within the interval does nothing; one looking while a run holds
    // the lock does nothing either.
    expect(await reconcileIfDue(db, 600, log)).toBe('not due');
    await db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(72635412)`.execute(conn);
      try {
        expect(await reconcileIfDue(db, 1, log)).toBe('running elsewhere');
      } finally {
        await sql`select pg_advisory_unlock(72635412)`.execute(conn);
      }
    });

    // A wallet that no longer equals its ledger is a difference at the next run.
    await db
      .updateTable('wallets')
      .set({ promo: sql`promo + 1` })
      .where('partner_id', '=', 'demo')
      .execute();
    try {
      const reconciler = startReconciler(db, 1, log);
      try {
        await expect
          .poll(async () => (await reconciliationStatus(db)).differences, { timeout: 15_000, interval: 200 })
          .toBe(1);
      } finally {
        await reconciler.stop();
      }
      text = await scrape();
      expect(value(text, 'polita_reconciliation_differences')).toBe(1);
      expect(value(text, 'polita_reconciliation_last_run_timestamp_seconds')).toBeGreaterThan(ranAt);
    } finally {
      await db
        .updateTable('wallets')
        .set({ promo: sql`promo - 1` })
        .where('partner_id', '=', 'demo')
        .execute();
    }
  });

  it('count webhook attempts by outcome, every outcome present from the start', async () => {
    const text = await scrape();
    for (const outcome of ['delivered', 'failed', 'error'])
      expect(text).toMatch(new RegExp(`^polita_webhook_attempts_total\\{outcome="${outcome}"\\} \\d+$`, 'm'));
  });
});

describe('webhook attempts on a worker instance', () => {
  let w: Harness;
  beforeAll(async () => {
    w = await startHarness();
  });
  afterAll(() => w?.close());

  it('are counted as failed when the endpoint does not answer', async () => {
    // A loopback port nobody listens on: the attempt fails at once.
    const hook = await w.admin('PATCH', '/admin/partners/demo', {
      webhook_url: `http://127.0.0.1:${await freePort()}/hook`,
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    await paidRcaOrder(w, w.demo, localDate(await w.service.svc.clock.now()));
    await expect
      .poll(
        async () => {
          const res = await w.service.app.inject({
            method: 'GET',
            url: '/metrics',
            headers: { authorization: `Bearer ${w.service.adminToken}` },
          });
          return value(res.body, 'polita_webhook_attempts_total\\{outcome="failed"\\}');
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(1);
  });
});
