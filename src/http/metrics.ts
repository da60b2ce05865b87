import { Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { FastifyInstance } from 'fastify';

export interface MetricsSources {
  ordersByStatus(): Promise<{ status: string; n: number }[]>;
  queueDepth(): Promise<{ queue: string; ready: number; active: number; deferred: number }[]>;
  /** Paid orders waiting in the issuance outbox for their issue-order job, and the oldest one's age. */
  issuanceOutbox(): Promise<{ count: number; oldestSeconds: number }>;
}

/**
 * Prometheus metrics: requests by route and status with latency; orders by status; job queue depth;
 * the issuance outbox.
 */
export function installMetrics(app: FastifyInstance, sources: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const durations = new RequestDurations([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
  // The registry reads any object in a metric's shape (name, help, type, get(), reset()).
  registry.registerMetric(durations as unknown as Metric);
  new Gauge({
    name: 'polita_orders',
    help: 'Orders by stored status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await sources.ordersByStatus()) this.set({ status: r.status }, r.n);
    },
  });
  new Gauge({
    name: 'polita_job_queue_depth',
    help: 'Background jobs by queue and state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const q of await sources.queueDepth()) {
        this.set({ queue: q.queue, state: 'ready' }, q.ready);
        this.set({ queue: q.queue, state: 'active' }, q.active);
        this.set({ queue: q.queue, state: 'deferred' }, q.deferred);
      }
    },
  });
  // Both outbox gauges from one query a scrape: the registry collects every metric at once, so the
  // second gauge finds the first one's query in flight.
  let outboxRead: ReturnType<MetricsSources['issuanceOutbox']> | undefined;
  const outbox = () =>
    (outboxRead ??= sources.issuanceOutbox().finally(() => {
      outboxRead = undefined;
    }));
  // Normally a batch's worth for milliseconds; rows that stay say no process is creating the jobs.
  new Gauge({
    name: 'polita_issuance_outbox_orders',
    help: 'Paid orders waiting in the issuance outbox for their issue-order job',
    registers: [registry],
    async collect() {
      this.set((await outbox()).count);
    },
  });
  new Gauge({
    name: 'polita_issuance_outbox_oldest_seconds',
    help: 'How long the oldest order in the issuance outbox has waited (0 when it is empty)',
    registers: [registry],
    async collect() {
      this.set((await outbox()).oldestSeconds);
    },
  });
  // A callback hook: no promise per request.
  app.addHook('onResponse', (req, reply, done) => {
    durations.observe(req.routeOptions.url ?? 'unmatched', req.method, reply.statusCode, reply.elapsedTime);
    done();
  });
  return registry;
}

interface Series {
  /** Requests whose duration fell in each bucket (not cumulative); above the last bound, none. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * http_request_duration_seconds, kept here rather than by a prom-client Histogram, whose observe()
 * converts, validates and hashes the labels into a string and counts in an object keyed by the
 * bound's text, on every request, a visible share of get-offers (decision 0033). A request here
 * finds its series by route, method and status (three lookups of strings and a number that are
 * hashed already) and adds to a typed array. /metrics prints it as prom-client printed the
 * Histogram: cumulative `_bucket{le=…}` lines, `+Inf`, `_sum`, `_count`.
 */
export class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'HTTP request latency by route, method and status';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly routes = new Map<string, Map<string, Map<number, Series>>>();
  private readonly bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
  }

  observe(route: string, method: string, status: number, elapsedMs: number): void {
    let methods = this.routes.get(route);
    if (!methods) this.routes.set(route, (methods = new Map()));
    let statuses = methods.get(method);
    if (!statuses) methods.set(method, (statuses = new Map()));
    let series = statuses.get(status);
    if (!series) {
      series = { buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      statuses.set(status, series);
    }
    const seconds = elapsedMs / 1000;
    series.sum += seconds;
    series.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= this.bounds[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
  }

  /** In prom-client's shape: what Registry.metrics() formats. */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [route, methods] of this.routes) {
      for (const [method, statuses] of methods) {
        for (const [status, s] of statuses) {
          const labels = { route, method, status: String(status) };
          let cumulative = 0;
          this.bounds.forEach((le, i) => {
            cumulative += s.buckets[i]!;
            values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
          });
          values.push({
            labels: { le: '+Inf', ...labels },
            value: s.count,
            metricName: `${this.name}_bucket`,
          });
          values.push({ labels, value: s.sum, metricName: `${this.name}_sum` });
          values.push({ labels, value: s.count, metricName: `${this.name}_count` });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.routes.clear();
  }
}
