import { afterAll, beforeAll, expect, it } from 'vitest';
import { overview } from '../../src/app/admin/overview.ts';
import { addDays, localDate } from '../../src/domain/time.ts';
import { rcaItem, startHarness, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/** The Overview's figures from the database: orders by status, revenue, issuance time, webhook failures. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

it('counts the period’s orders by status, revenue by product, issuance times and failing webhooks', async () => {
  const svc = h.service.svc;
  const today = localDate(await svc.clock.now());
  const done = await paidRcaOrder(h, h.demo, today);
  await h.waitForStatus(done, 'completed');
  const failing = await h.newPartner({ name: 'Agenția Sud', webhook_url: 'http://localhost:9/hook' });
  const other = await paidRcaOrder(h, failing, today);
  await h.waitForStatus(other, 'completed', { creds: failing });
  const draft = await h.call<{ id: string }>('create-order', {
    customer: { phone: '+37369000000' },
    products: [rcaItem(today)],
  });
  expect(draft.status).toBe(200);
  await expect
    .poll(async () => (await overview(svc, {})).webhooks.failed, { timeout: 15_000 })
    .toBeGreaterThan(0);

  const o = await overview(svc, { period: '24h' });
  expect(o.period.unit).toBe('hour');
  expect(o.orders.buckets.length).toBeGreaterThanOrEqual(24);
  expect(o.orders.total).toBe(3);
  const sum = (s: string) => o.orders.buckets.reduce((n, b) => n + (b.counts[s] ?? 0), 0);
  expect([sum('completed'), sum('draft')]).toEqual([2, 1]);
  expect(o.revenue.products).toHaveLength(1);
  expect(o.revenue.products[0]).toMatchObject({ product: 'rca', orders: 2 });
  expect(o.revenue.total).toBe(o.revenue.products[0]!.revenue);
  expect(o.issuance.completed).toBe(2);
  expect(o.issuance.p50_seconds).toBeGreaterThanOrEqual(0);
  expect(o.issuance.bands.reduce((n, b) => n + b.orders, 0)).toBe(2);
  expect(o.webhooks.failing_partners).toEqual([
    expect.objectContaining({ partner_id: failing.id, name: 'Agenția Sud', delivered: 0 }),
  ]);

  // By the day over dates; yesterday alone holds nothing.
  const week = await overview(svc, { from: addDays(today, -6), to: today });
  expect(week.period.unit).toBe('day');
  expect(week.orders.buckets.map((b) => b.bucket)).toHaveLength(7);
  expect(week.orders.buckets.at(-1)!.bucket).toBe(today);
  expect((await overview(svc, { from: addDays(today, -1), to: addDays(today, -1) })).orders.total).toBe(0);

  await expect(overview(svc, { period: 'forever' })).rejects.toThrow('Period must be one of 24h, 7d, 30d');
  await expect(overview(svc, { from: today, to: addDays(today, -1) })).rejects.toThrow(
    'From must not be after To',
  );
});
