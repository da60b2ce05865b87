import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance } from 'fastify';

export interface MetricsSources {
  ordersByStatus(): Promise<{ status: string; n: number }[]>;
  queueDepth(): Promise<{ queue: string; ready: number; active: number; deferred: number }[]>;
  /** Paid orders waiting in the issuance outbox for their issue-order job, and the oldest one's age. */
  issuanceOutbox(): Promise<{ count: number; oldestSeconds: number }>;
  /** Whether the database answers now (absent: the gauge is not exposed). */
  databaseUp?(): Promise<boolean>;
}

/**
 * A gauge read from the database: while the database is away it has no value (the scrape still
 * answers, with polita_database_up 0), rather than failing the whole scrape.
 */
async function orNothing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

/**
 * Prometheus metrics: requests by route and status with latency; unexpected failures and those of an
 * unreachable database; whether the database answers; orders by status; job queue depth; the
 * issuance outbox.
 */
export function installMetrics(app: FastifyInstance, sources: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'polita_orders',
    help: 'Orders by stored status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of (await orNothing(sources.ordersByStatus)) ?? []) this.set({ status: r.status }, r.n);
    },
  });
  new Gauge({
    name: 'polita_job_queue_depth',
    help: 'Background jobs by queue and state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const q of (await orNothing(sources.queueDepth)) ?? []) {
        this.set({ queue: q.queue, state: 'ready' }, q.ready);
        this.set({ queue: q.queue, state: 'active' }, q.active);
        this.set({ queue: q.queue, state: 'deferred' }, q.deferred);
      }
    },
  });
  // Both outbox gauges from one query a scrape: the registry collects every metric at once, so the
  // second gauge finds the first one's query in flight.
  let outboxRead: Promise<Awaited<ReturnType<MetricsSources['issuanceOutbox']>> | undefined> | undefined;
  const outbox = () =>
    (outboxRead ??= orNothing(sources.issuanceOutbox).finally(() => {
      outboxRead = undefined;
    }));
  // Normally a batch's worth for milliseconds; rows that stay say no process is creating the jobs.
  new Gauge({
    name: 'polita_issuance_outbox_orders',
    help: 'Paid orders waiting in the issuance outbox for their issue-order job',
    registers: [registry],
    async collect() {
      this.reset();
      const read = await outbox();
      if (read) this.set(read.count);
    },
  });
  new Gauge({
    name: 'polita_issuance_outbox_oldest_seconds',
    help: 'How long the oldest order in the issuance outbox has waited (0 when it is empty)',
    registers: [registry],
    async collect() {
      this.reset();
      const read = await outbox();
      if (read) this.set(read.oldestSeconds);
    },
  });
  const databaseUp = sources.databaseUp;
  if (databaseUp) {
    new Gauge({
      name: 'polita_database_up',
      help: 'Whether this instance reaches its database (1) or not (0)',
      registers: [registry],
      async collect() {
        this.set((await orNothing(databaseUp)) ? 1 : 0);
      },
    });
  }
  // Answers the error-rate alert counts: an unexpected 500, and a database that could not be
  // reached (500 on /v1, 503 elsewhere). Product-rule refusals (500 [API]) are answers of the API.
  const failures = new Counter({
    name: 'polita_http_errors_total',
    help: 'Requests answered with an unexpected failure or because the database was unreachable, by kind',
    labelNames: ['kind'],
    registers: [registry],
  });
  failures.inc({ kind: 'unexpected' }, 0);
  failures.inc({ kind: 'database_unavailable' }, 0);
  // A callback hook: no promise per request.
  app.addHook('onResponse', (req, reply, done) => {
    durations.observe(
      { route: req.routeOptions.url ?? 'unmatched', method: req.method, status: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    if (req.failure) failures.inc({ kind: req.failure });
    done();
  });
  return registry;
}
