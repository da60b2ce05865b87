import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobName } from '../../src/app/services.ts';
import { onPostgres } from '../support/database.ts';
import { startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(() => h?.close());

/**
 * On PGlite, workers are woken by the NOTIFY of the transaction that enqueued the job (LISTEN through
 * the mutex), not by their poll. On PostgreSQL the queues do not notify: a notifying transaction
 * commits under a global lock, which halved wallet payments over many partners.
 */
describe('job notifications', () => {
  it.runIf(onPostgres())('are off on PostgreSQL: the queues poll', async () => {
    for (const name of ['issue-order', 'deliver-webhook'])
      expect((await h.service.boss.getQueue(name))?.notify).toBe(false);
  });

  it.skipIf(onPostgres())(
    'a job enqueued in a transaction reaches a worker that polls only every 30 s, once committed',
    async () => {
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
    },
  );
});
