import { sql } from 'kysely';
import { TIME_ZONE } from '../../domain/time.ts';
import type { Db } from '../schema.ts';

/**
 * Aggregates for the console's Overview, each over a period [from, to). Buckets are local
 * (Europe/Chisinau) hours or days, named by their local start: `2026-09-30T14` or `2026-09-30`.
 */
export type BucketUnit = 'hour' | 'day';

const bucketOf = (column: string, unit: BucketUnit) =>
  unit === 'hour'
    ? sql<string>`to_char(date_trunc('hour', ${sql.ref(column)} at time zone ${TIME_ZONE}), 'YYYY-MM-DD"T"HH24')`
    : sql<string>`to_char(date_trunc('day', ${sql.ref(column)} at time zone ${TIME_ZONE}), 'YYYY-MM-DD')`;

/** Orders created in the period by bucket and status (a draft past its expiry counts as expired). */
export async function ordersByBucketAndStatus(
  db: Db,
  p: { from: Date; to: Date; unit: BucketUnit; now: Date },
): Promise<{ bucket: string; status: string; n: number }[]> {
  const status = sql<string>`case when status = 'draft' and expires_at <= ${p.now} then 'expired' else status end`;
  const rows = await db
    .selectFrom('orders')
    .select([bucketOf('created_at', p.unit).as('bucket'), status.as('status'), sql<string>`count(*)`.as('n')])
    .where('created_at', '>=', p.from)
    .where('created_at', '<', p.to)
    .groupBy([sql`1`, sql`2`])
    .execute();
  return rows.map((r) => ({ bucket: r.bucket, status: r.status, n: Number(r.n) }));
}

/** Revenue of the orders completed in the period (refunded ones excluded), per product, in bani. */
export async function revenueByProduct(
  db: Db,
  p: { from: Date; to: Date },
): Promise<{ product: string; orders: number; revenue: number }[]> {
  const rows = await db
    .selectFrom('orders as o')
    .innerJoin('order_items as i', 'i.order_id', 'o.id')
    .select([
      'i.product',
      sql<string>`count(distinct o.id)`.as('orders'),
      sql<string>`coalesce(sum(i.price), 0)`.as('revenue'),
    ])
    .where('o.status', '=', 'completed')
    .where('o.completed_at', '>=', p.from)
    .where('o.completed_at', '<', p.to)
    .groupBy('i.product')
    .orderBy(sql`3`, 'desc')
    .orderBy('i.product')
    .execute();
  return rows.map((r) => ({ product: r.product, orders: Number(r.orders), revenue: Number(r.revenue) }));
}

/** Upper bounds (seconds) of the issuance-time histogram's bands; the last band is open. */
export const ISSUANCE_BANDS = [1, 5, 30, 120, 600] as const;

/**
 * Issuance time (payment to completion) of the orders completed in the period: count, median,
 * 90th percentile and maximum in seconds, and how many fell in each band of ISSUANCE_BANDS.
 */
export async function issuanceTimes(
  db: Db,
  p: { from: Date; to: Date },
): Promise<{ n: number; p50: number | null; p90: number | null; max: number | null; bands: number[] }> {
  const secs = sql<number>`extract(epoch from (completed_at - paid_at))`;
  const [summary] = await db
    .selectFrom('orders')
    .select([
      sql<string>`count(*)`.as('n'),
      sql<number | null>`percentile_cont(0.5) within group (order by ${secs})`.as('p50'),
      sql<number | null>`percentile_cont(0.9) within group (order by ${secs})`.as('p90'),
      sql<number | null>`max(${secs})`.as('max'),
    ])
    .where('completed_at', '>=', p.from)
    .where('completed_at', '<', p.to)
    .where('paid_at', 'is not', null)
    .execute();
  const bands = await db
    .selectFrom('orders')
    .select([
      sql<number>`width_bucket(${secs}, ${sql.val([...ISSUANCE_BANDS])}::float8[])`.as('band'),
      sql<string>`count(*)`.as('n'),
    ])
    .where('completed_at', '>=', p.from)
    .where('completed_at', '<', p.to)
    .where('paid_at', 'is not', null)
    .groupBy(sql`1`)
    .execute();
  const counts = Array.from({ length: ISSUANCE_BANDS.length + 1 }, () => 0);
  for (const b of bands) counts[Number(b.band)] = Number(b.n);
  const num = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    n: Number(summary?.n ?? 0),
    p50: num(summary?.p50),
    p90: num(summary?.p90),
    max: num(summary?.max),
    bands: counts,
  };
}

/** Webhook delivery attempts in the period by bucket: delivered (2xx) and failed. */
export async function webhookAttemptsByBucket(
  db: Db,
  p: { from: Date; to: Date; unit: BucketUnit },
): Promise<{ bucket: string; delivered: number; failed: number }[]> {
  const rows = await db
    .selectFrom('webhook_attempts')
    .select([
      bucketOf('attempted_at', p.unit).as('bucket'),
      sql<string>`count(*) filter (where error is null)`.as('delivered'),
      sql<string>`count(*) filter (where error is not null)`.as('failed'),
    ])
    .where('attempted_at', '>=', p.from)
    .where('attempted_at', '<', p.to)
    .groupBy(sql`1`)
    .execute();
  return rows.map((r) => ({ bucket: r.bucket, delivered: Number(r.delivered), failed: Number(r.failed) }));
}

/**
 * Per partner with a failed attempt in the period: failed and delivered attempts, the first and
 * last failure, the last delivery, and its events that ran out of retries in the period.
 */
export async function webhookFailuresByPartner(
  db: Db,
  p: { from: Date; to: Date },
): Promise<
  {
    partner_id: string;
    name: string;
    failed: number;
    delivered: number;
    first_failure: Date;
    last_failure: Date;
    last_delivery: Date | null;
    given_up: number;
  }[]
> {
  const rows = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('orders as o', 'o.id', 'a.order_id')
    .innerJoin('partners as pt', 'pt.id', 'o.partner_id')
    .select([
      'o.partner_id',
      'pt.name',
      sql<string>`count(*) filter (where a.error is not null)`.as('failed'),
      sql<string>`count(*) filter (where a.error is null)`.as('delivered'),
      sql<Date>`min(a.attempted_at) filter (where a.error is not null)`.as('first_failure'),
      sql<Date>`max(a.attempted_at) filter (where a.error is not null)`.as('last_failure'),
      sql<Date | null>`max(a.attempted_at) filter (where a.error is null)`.as('last_delivery'),
      sql<string>`(select count(*) from webhook_events e where e.partner_id = o.partner_id
        and e.state = 'failed' and e.settled_at >= ${p.from} and e.settled_at < ${p.to})`.as('given_up'),
    ])
    .where('a.attempted_at', '>=', p.from)
    .where('a.attempted_at', '<', p.to)
    .groupBy(['o.partner_id', 'pt.name'])
    .having(sql<boolean>`count(*) filter (where a.error is not null) > 0`)
    .orderBy(sql`3`, 'desc')
    .execute();
  return rows.map((r) => ({
    partner_id: r.partner_id,
    name: r.name,
    failed: Number(r.failed),
    delivered: Number(r.delivered),
    first_failure: r.first_failure,
    last_failure: r.last_failure,
    last_delivery: r.last_delivery,
    given_up: Number(r.given_up),
  }));
}
