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
});
