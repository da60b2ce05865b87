import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { WebhookAttempts } from '../../src/app/ops-counters.ts';
import { installMetrics } from '../../src/http/metrics.ts';

describe('metrics', () => {
  it('reads the issuance outbox once a scrape for both of its gauges', async () => {
    let reads = 0;
    const registry = installMetrics(Fastify(), {
      ordersByStatus: async () => [],
      queueDepth: async () => [],
      issuanceOutbox: async () => {
        reads++;
        return { count: 3, oldestSeconds: 1.5 };
      },
      issuanceBacklog: async () => ({ oldestSeconds: 0 }),
      reconciliation: async () => ({ differences: 0, lastRunSeconds: 0 }),
    });
    for (const scrape of [1, 2]) {
      const text = await registry.metrics();
      expect(reads).toBe(scrape);
      expect(text).toMatch(/^polita_issuance_outbox_orders 3$/m);
      expect(text).toMatch(/^polita_issuance_outbox_oldest_seconds 1\.5$/m);
    }
  });

  it('reads the last reconciliation once a scrape, and counts webhook attempts by outcome', async () => {
    let reads = 0;
    const attempts = new WebhookAttempts();
    const registry = installMetrics(Fastify(), {
      ordersByStatus: async () => [],
      queueDepth: async () => [],
      issuanceOutbox: async () => ({ count: 0, oldestSeconds: 0 }),
      issuanceBacklog: async () => ({ oldestSeconds: 75 }),
      reconciliation: async () => {
        reads++;
        return { differences: 2, lastRunSeconds: 1_800_000_000 };
      },
      webhookAttempts: attempts,
    });
    let text = await registry.metrics();
    expect(reads).toBe(1);
    expect(text).toMatch(/^polita_issuance_backlog_oldest_seconds 75$/m);
    expect(text).toMatch(/^polita_reconciliation_differences 2$/m);
    expect(text).toMatch(/^polita_reconciliation_last_run_timestamp_seconds 1800000000$/m);
    // Every outcome is there from the start, so that a rate over them is defined.
    for (const outcome of ['delivered', 'failed', 'error'])
      expect(text).toMatch(new RegExp(`^polita_webhook_attempts_total\\{outcome="${outcome}"\\} 0$`, 'm'));
    attempts.add('delivered');
    attempts.add('delivered');
    attempts.add('failed');
    text = await registry.metrics();
    expect(text).toMatch(/^polita_webhook_attempts_total\{outcome="delivered"\} 2$/m);
    expect(text).toMatch(/^polita_webhook_attempts_total\{outcome="failed"\} 1$/m);
  });

  it('counts each request by route, method and status in the histogram dashboards read', async () => {
    const app = Fastify();
    const registry = installMetrics(app, {
      ordersByStatus: async () => [],
      queueDepth: async () => [],
      issuanceOutbox: async () => ({ count: 0, oldestSeconds: 0 }),
      issuanceBacklog: async () => ({ oldestSeconds: 0 }),
      reconciliation: async () => ({ differences: 0, lastRunSeconds: 0 }),
    });
    app.get('/health', async () => 'ok');
    app.post('/v1/get-offers', async (_req, reply) => reply.code(403).send({ error: 'Forbidden' }));
    for (const [method, url] of [
      ['GET', '/health'],
      ['GET', '/health'],
      ['POST', '/v1/get-offers'],
      ['GET', '/nowhere'],
    ] as const)
      await app.inject({ method, url });
    const text = await registry.metrics();
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    const count = (labels: string) =>
      new RegExp(`^http_request_duration_seconds_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1];
    expect(count('route="/health",method="GET",status="200"')).toBe('2');
    expect(count('route="/v1/get-offers",method="POST",status="403"')).toBe('1');
    expect(count('route="unmatched",method="GET",status="404"')).toBe('1');
    // The buckets' bounds, in seconds, as the dashboards' queries name them; each cumulative.
    const buckets = [
      ...text.matchAll(
        /^http_request_duration_seconds_bucket\{le="([^"]+)",route="\/health",method="GET",status="200"\} (\d+)$/gm,
      ),
    ];
    expect(buckets.map((b) => b[1])).toEqual([
      ...['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5'],
      '+Inf',
    ]);
    const counts = buckets.map((b) => Number(b[2]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(2);
    expect(text).toMatch(
      /^http_request_duration_seconds_sum\{route="\/health",method="GET",status="200"\} [0-9.e-]+$/m,
    );
  });
});
