import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { WEBHOOK_OUTCOMES, type WebhookAttempts } from '../app/ops-counters.ts';
import type { FastifyInstance } from 'fastify';

export interface MetricsSources {
  ordersByStatus(): Promise<{ status: string; n: number }[]>;
  queueDepth(): Promise<{ queue: string; ready: number; active: number; deferred: number }[]>;
  /** Paid orders waiting in the issuance outbox for their issue-order job, and the oldest one's age. */
  issuanceOutbox(): Promise<{ count: number; oldestSeconds: number }>;
  /** How long the oldest paid order not yet issued has waited (0 when none waits). */
  issuanceBacklog(): Promise<{ oldestSeconds: number }>;
  /** The last reconciliation by any instance: its differences and start (unix seconds, 0 before the first). */
  reconciliation(): Promise<{ differences: number; lastRunSeconds: number }>;
  /** This process's webhook attempts so far, by outcome (none where no workers run). */
  webhookAttempts?: WebhookAttempts | undefined;
  /** Whether the database answers now (absent: the gauge is not exposed). */
  databaseUp?(): Promise<boolean>;
}

/**
 * Two gauges from one query a scrape: the registry collects every metric at once, so the second
 * gauge finds the first one's query in flight and shares it.
 */
function oneReadPerScrape<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let inFlight: Promise<T | undefined> | undefined;
  return () =>
    (inFlight ??= orNothing(read).finally(() => {
      inFlight = undefined;
    }));
}

/** A gauge's value, or none (not exposed this scrape) when its read failed. */
function setOrClear(gauge: Gauge, value: number | undefined): void {
  gauge.reset();
  if (value !== undefined) gauge.set(value);
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
 * Prometheus metrics: requests by route and status with latency; orders by status; job queue depth;
 * the issuance outbox and backlog; webhook attempts; the last reconciliation; unexpected failures and
 * those of an unreachable database, and whether it answers. What
 * ops/prometheus-rules.yml alerts on is here, each read in one indexed statement at most a scrape.
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
  const outbox = oneReadPerScrape(() => sources.issuanceOutbox());
  // Normally a batch's worth for milliseconds; rows that stay say no process is creating the jobs.
  new Gauge({
    name: 'polita_issuance_outbox_orders',
    help: 'Paid orders waiting in the issuance outbox for their issue-order job',
    registers: [registry],
    async collect() {
      setOrClear(this, (await outbox())?.count);
    },
  });
  new Gauge({
    name: 'polita_issuance_outbox_oldest_seconds',
    help: 'How long the oldest order in the issuance outbox has waited (0 when it is empty)',
    registers: [registry],
    async collect() {
      setOrClear(this, (await outbox())?.oldestSeconds);
    },
  });
  // Normally seconds (the provider's answer); minutes say issuance is stuck (decision 0056).
  new Gauge({
    name: 'polita_issuance_backlog_oldest_seconds',
    help: 'How long the oldest paid order not yet issued (paid or processing) has waited (0 when none waits)',
    registers: [registry],
    async collect() {
      setOrClear(this, (await orNothing(sources.issuanceBacklog))?.oldestSeconds);
    },
  });
  new Counter({
    name: 'polita_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome: delivered (2xx), failed (the endpoint refused or did not answer), error (the attempt could not be made or recorded)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const outcome of WEBHOOK_OUTCOMES)
        this.inc({ outcome }, sources.webhookAttempts?.count(outcome) ?? 0);
    },
  });
  const reconciliation = oneReadPerScrape(() => sources.reconciliation());
  new Gauge({
    name: 'polita_reconciliation_differences',
    help: 'Differences the last reconciliation found between wallets, their ledgers and paid orders',
    registers: [registry],
    async collect() {
      setOrClear(this, (await reconciliation())?.differences);
    },
  });
  new Gauge({
    name: 'polita_reconciliation_last_run_timestamp_seconds',
    help: 'When the last reconciliation (by any instance) began, in unix seconds; 0 before the first',
    registers: [registry],
    async collect() {
      setOrClear(this, (await reconciliation())?.lastRunSeconds);
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
