import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobName } from '../../src/app/services.ts';
import { startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(() => h?.close());

/**
 * Workers are woken by the NOTIFY of the transaction that enqueued the job (through the PGlite
 * mutex, or pg-boss's own listening connection on PostgreSQL), not by their poll.
 */
describe('job notifications', () => {
  it('a job enqueued in a transaction reaches a worker that polls only every 30 s, once committed', async () => {
    const { boss, svc } = h.service;
    const queue = 'notify-probe';
    await boss.createQueue(queue, { notify: true });
    const seen: { id: string; at: number }[] = [];
    await boss.work<{ id: string }>(
      queue,
      { pollingIntervalSeconds: 30, notifyPollingIntervalSeconds: 30 },
      async ([job]) => {
        if (job) seen.push({ id: job.data.id, at: Date.now() });
      },
    );
    // Past the worker's first fetch, so that only a notification can bring the next job.
    await new Promise((r) => setTimeout(r, 1000));

    const sent = Date.now();
    await svc.db.transaction().execute(async (trx) => {
      await svc.jobs.enqueue(trx, queue as JobName, { id: 'probe' });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toEqual([]); // not before the commit
    });
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(seen.map((s) => s.id)).toEqual(['probe']);
    expect(seen[0]!.at - sent).toBeLessThan(10_000);
  });
});
