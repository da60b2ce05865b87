import { badRequest } from '../../domain/errors.ts';
import { baniToMdl } from '../../domain/money.ts';
import { ORDER_STATUSES } from '../../domain/order-state.ts';
import {
  addDays,
  daysBetween,
  isoLocal,
  isValidDate,
  localDate,
  localDateTime,
  localInstant,
} from '../../domain/time.ts';
import {
  ISSUANCE_BANDS,
  issuanceTimes,
  ordersByBucketAndStatus,
  revenueByProduct,
  webhookAttemptsByBucket,
  webhookFailuresByPartner,
  type BucketUnit,
} from '../../db/repos/stats.ts';
import type { Services } from '../services.ts';

/** The periods the Overview offers, beside a range of dates. */
export const PERIODS = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' } as const;
export type Period = keyof typeof PERIODS;
const HOUR_MS = 3_600_000;
/** A range of dates longer than this is refused: a day a bar, the chart stays readable. */
const MAX_DAYS = 366;

/** A period of the Overview: its bounds (epoch ms), the unit of its bars and how it is described. */
interface Range {
  from: number;
  to: number;
  unit: BucketUnit;
  label: string;
}

function rangeOf(now: number, q: { period?: string; from?: string; to?: string }): Range {
  if (q.from || q.to) {
    const from = q.from || q.to!;
    const to = q.to || q.from!;
    if (!isValidDate(from) || !isValidDate(to)) throw badRequest('From and To must be dates yyyy-mm-dd');
    if (daysBetween(from, to) < 0) throw badRequest('From must not be after To');
    if (daysBetween(from, to) >= MAX_DAYS) throw badRequest(`A period is at most ${MAX_DAYS} days`);
    return {
      from: localInstant(from, '00:00:00'),
      to: localInstant(addDays(to, 1), '00:00:00'),
      // Up to two days by the hour, longer ones by the day.
      unit: daysBetween(from, to) < 2 ? 'hour' : 'day',
      label: from === to ? from : `${from} to ${to}`,
    };
  }
  const period = q.period ?? '24h';
  if (!Object.hasOwn(PERIODS, period))
    throw badRequest(`Period must be one of ${Object.keys(PERIODS).join(', ')}`);
  const p = period as Period;
  if (p === '30d') {
    return {
      from: localInstant(addDays(localDate(now), -29), '00:00:00'),
      to: now + 1,
      unit: 'day',
      label: PERIODS[p],
    };
  }
  return { from: now - (p === '24h' ? 24 : 168) * HOUR_MS, to: now + 1, unit: 'hour', label: PERIODS[p] };
}

/** The buckets of a range in order, each named as the repository names it. */
function bucketsOf(r: Range): string[] {
  const keys: string[] = [];
  if (r.unit === 'day') {
    for (let d = localDate(r.from); d <= localDate(r.to - 1); d = addDays(d, 1)) keys.push(d);
    return keys;
  }
  for (let ms = Math.floor(r.from / HOUR_MS) * HOUR_MS; ms < r.to; ms += HOUR_MS) {
    const key = localDateTime(ms).slice(0, 13).replace(' ', 'T');
    if (keys.at(-1) !== key) keys.push(key);
  }
  return keys;
}

const seconds = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);

/**
 * The Overview's figures over a period (the last 24 hours by default, by the service clock): orders
 * by bucket and status, revenue by product, issuance times and webhook failures.
 */
export async function overview(svc: Services, q: { period?: string; from?: string; to?: string }) {
  const now = await svc.clock.now();
  const r = rangeOf(now, q);
  const from = new Date(r.from);
  const to = new Date(r.to);
  const [orders, revenue, issuance, attempts, failing] = await Promise.all([
    ordersByBucketAndStatus(svc.db, { from, to, unit: r.unit, now: new Date(now) }),
    revenueByProduct(svc.db, { from, to }),
    issuanceTimes(svc.db, { from, to }),
    webhookAttemptsByBucket(svc.db, { from, to, unit: r.unit }),
    webhookFailuresByPartner(svc.db, { from, to }),
  ]);
  const buckets = bucketsOf(r);
  const byBucket = new Map(buckets.map((b) => [b, Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0]))]));
  for (const row of orders) {
    const counts = byBucket.get(row.bucket);
    if (counts) counts[row.status] = (counts[row.status] ?? 0) + row.n;
  }
  const attemptsBy = new Map(attempts.map((a) => [a.bucket, a]));
  const bandLabels = [
    `under ${ISSUANCE_BANDS[0]} s`,
    ...ISSUANCE_BANDS.slice(1).map((hi, i) => `${label(ISSUANCE_BANDS[i]!)} to ${label(hi)}`),
    `${label(ISSUANCE_BANDS.at(-1)!)} or more`,
  ];
  return {
    period: {
      label: r.label,
      from: isoLocal(r.from),
      to: isoLocal(Math.min(r.to, now)),
      unit: r.unit,
    },
    orders: {
      statuses: ORDER_STATUSES,
      buckets: buckets.map((bucket) => ({ bucket, counts: byBucket.get(bucket)! })),
      total: orders.reduce((n, row) => n + row.n, 0),
    },
    revenue: {
      currency: 'MDL' as const,
      products: revenue.map((p) => ({ product: p.product, orders: p.orders, revenue: baniToMdl(p.revenue) })),
      total: baniToMdl(revenue.reduce((n, p) => n + p.revenue, 0)),
    },
    issuance: {
      completed: issuance.n,
      p50_seconds: seconds(issuance.p50),
      p90_seconds: seconds(issuance.p90),
      max_seconds: seconds(issuance.max),
      bands: issuance.bands.map((n, i) => ({ label: bandLabels[i]!, orders: n })),
    },
    webhooks: {
      buckets: buckets.map((bucket) => ({
        bucket,
        delivered: attemptsBy.get(bucket)?.delivered ?? 0,
        failed: attemptsBy.get(bucket)?.failed ?? 0,
      })),
      delivered: attempts.reduce((n, a) => n + a.delivered, 0),
      failed: attempts.reduce((n, a) => n + a.failed, 0),
      failing_partners: failing.map((f) => ({
        partner_id: f.partner_id,
        name: f.name,
        failed: f.failed,
        delivered: f.delivered,
        first_failure: isoLocal(f.first_failure.getTime()),
        last_failure: isoLocal(f.last_failure.getTime()),
        last_delivery: f.last_delivery ? isoLocal(f.last_delivery.getTime()) : null,
        given_up: f.given_up,
      })),
    },
  };
}

export type Overview = Awaited<ReturnType<typeof overview>>;

function label(s: number): string {
  return s < 60 ? `${s} s` : `${s / 60} min`;
}
