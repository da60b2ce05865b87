import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
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
    });
    for (const scrape of [1, 2]) {
      const text = await registry.metrics();
      expect(reads).toBe(scrape);
      expect(text).toMatch(/^polita_issuance_outbox_orders 3$/m);
      expect(text).toMatch(/^polita_issuance_outbox_oldest_seconds 1\.5$/m);
    }
  });

  it('counts each request by route, method and status in the histogram dashboards read', async () => {
    const app = Fastify();
    const registry = installMetrics(app, {
      ordersByStatus: async () => [],
      queueDepth: async () => [],
      issuanceOutbox: async () => ({ count: 0, oldestSeconds: 0 }),
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
