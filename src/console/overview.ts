import { Type } from '@sinclair/typebox';
import { overview, PERIODS, type Overview } from '../app/admin/overview.ts';
import type { Services } from '../app/services.ts';
import type { App } from '../http/typed.ts';
import { horizontalBars, stackedBars, type StackedBar } from './charts.ts';
import { fromHtmx, given, queryOf, unlessRefused, type Render } from './web.ts';

const Query = Type.Object({
  period: Type.Optional(Type.String({ maxLength: 10 })),
  from: Type.Optional(Type.String({ maxLength: 10 })),
  to: Type.Optional(Type.String({ maxLength: 10 })),
  done: Type.Optional(Type.String({ maxLength: 40 })),
});

/** Overview: orders by status, revenue by product, issuance time and webhook failures over a period. */
export async function overviewPage(app: App, svc: Services, render: Render): Promise<void> {
  app.get('/', { schema: { querystring: Query } }, async (req, reply) => {
    const from = given(req.query.from);
    const to = given(req.query.to);
    const period = from || to ? undefined : (given(req.query.period) ?? '24h');
    const form = { period: period ?? '', from: from ?? '', to: to ?? '' };
    if (fromHtmx(req)) reply.header('hx-push-url', `/console${queryOf(form)}`);
    const base = { title: 'Overview', nav: 'overview', periods: PERIODS, form };
    return unlessRefused(
      async () => {
        const o = await overview(svc, {
          ...(period ? { period } : {}),
          ...(from ? { from } : {}),
          ...(to ? { to } : {}),
        });
        return render(req, reply, 'overview', { ...base, o, charts: charts(o) });
      },
      (r) => render(req, reply, 'overview', { ...base, error: r.message }, r.status),
    );
  });
}

/** A bucket's name as a person reads it: `14:00` for an hour (with the date at midnight), `30.09` for a day. */
function bucketLabel(bucket: string, unit: 'hour' | 'day'): { short: string; long: string } {
  const [date, hour] = bucket.split('T');
  const [, m, d] = date!.split('-');
  if (unit === 'day') return { short: `${d}.${m}`, long: date! };
  return { short: hour === '00' ? `${d}.${m}` : `${hour}:00`, long: `${date} ${hour}:00` };
}

/** Every nth label, so that about eight show under the axis. */
const sparse = <T>(items: T[], i: number) => i % Math.max(1, Math.ceil(items.length / 8)) === 0;

function charts(o: Overview) {
  const unit = o.period.unit;
  const per = unit === 'hour' ? 'hour' : 'day';
  const orderBars: StackedBar[] = o.orders.buckets.map((b, i) => {
    const l = bucketLabel(b.bucket, unit);
    return {
      label: sparse(o.orders.buckets, i) ? l.short : '',
      title: l.long,
      parts: o.orders.statuses.map((s) => ({ key: s, value: b.counts[s] ?? 0 })),
    };
  });
  const webhookBars: StackedBar[] = o.webhooks.buckets.map((b, i) => {
    const l = bucketLabel(b.bucket, unit);
    return {
      label: sparse(o.webhooks.buckets, i) ? l.short : '',
      title: l.long,
      parts: [
        { key: 'failed', value: b.failed },
        { key: 'delivered', value: b.delivered },
      ],
    };
  });
  const byStatus = o.orders.statuses
    .map((s) => `${o.orders.buckets.reduce((n, b) => n + (b.counts[s] ?? 0), 0)} ${s}`)
    .join(', ');
  return {
    per,
    orders: stackedBars({
      id: 'chart-orders',
      title: `Orders per ${per} by status, ${o.period.label}`,
      desc: `${o.orders.total} orders: ${byStatus}.`,
      bars: orderBars,
      empty: 'No orders in this period',
    }),
    revenue: horizontalBars({
      id: 'chart-revenue',
      title: `Revenue by product, ${o.period.label}`,
      desc: `${o.revenue.total.toFixed(2)} MDL from completed orders${o.revenue.products.map((p) => `; ${p.product} ${p.revenue.toFixed(2)} MDL`).join('')}.`,
      rows: o.revenue.products.map((p) => ({
        label: p.product,
        value: p.revenue,
        text: `${p.revenue.toFixed(2)} MDL (${p.orders} ${p.orders === 1 ? 'order' : 'orders'})`,
      })),
      empty: 'No completed orders in this period',
    }),
    issuance: horizontalBars({
      id: 'chart-issuance',
      title: `Issuance time (payment to policy), ${o.period.label}`,
      desc:
        o.issuance.completed === 0
          ? 'No order was completed in this period.'
          : `${o.issuance.completed} orders completed; median ${o.issuance.p50_seconds} s, 90th percentile ${o.issuance.p90_seconds} s, longest ${o.issuance.max_seconds} s.`,
      rows: o.issuance.bands.map((b) => ({
        label: b.label,
        value: b.orders,
        text: `${b.orders} ${b.orders === 1 ? 'order' : 'orders'}`,
      })),
      empty: 'No orders completed in this period',
    }),
    webhooks: stackedBars({
      id: 'chart-webhooks',
      title: `Webhook attempts per ${per}, ${o.period.label}`,
      desc: `${o.webhooks.failed} failed and ${o.webhooks.delivered} delivered attempts.`,
      bars: webhookBars,
      empty: 'No webhook attempts in this period',
    }),
  };
}
