import Fastify from 'fastify';
import { Histogram, Registry, type Metric } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { installMetrics, RequestDurations } from '../../src/http/metrics.ts';

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

  it('prints request durations line for line as a prom-client Histogram of the same observations', async () => {
    const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
    const theirs = new Registry();
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets,
      registers: [theirs],
    });
    const ours = new Registry();
    const durations = new RequestDurations(buckets);
    ours.registerMetric(durations as unknown as Metric);
    const seen: [string, string, number, number][] = [
      ['/v1/get-offers', 'POST', 200, 0.4],
      ['/v1/get-offers', 'POST', 200, 1], // on a bound: counted in it (le = less or equal)
      ['/v1/get-offers', 'POST', 403, 7.3],
      ['/v1/get-order', 'POST', 404, 2600], // above the last bound: +Inf only
      ['unmatched', 'GET', 404, 0.02],
      ['/v1/get-offers', 'POST', 200, 100],
      ['/health', 'GET', 200, 0.0001],
    ];
    for (const [route, method, status, ms] of seen) {
      histogram.observe({ route, method, status: String(status) }, ms / 1000);
      durations.observe(route, method, status, ms);
    }
    const lines = async (r: Registry) => (await r.metrics()).split('\n').sort();
    expect(await lines(ours)).toEqual(await lines(theirs));
    durations.reset();
    expect(await ours.metrics()).not.toMatch(/_count/);
  });
});
