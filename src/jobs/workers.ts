import type { Job, JobResult, PgBoss } from 'pg-boss';
import { deliverWebhook } from '../app/deliver-webhook.ts';
import { expireDrafts } from '../app/expire-drafts.ts';
import { forgetExpiredKeys } from '../app/idempotency.ts';
import { issueOrder } from '../app/issue-order.ts';
import type { Services } from '../app/services.ts';
import { QUEUES } from './queue.ts';

/** Jobs a worker takes per poll: issuance is mostly waiting on the database, the provider and the PDF. */
const ISSUE_BATCH = 8;
const WEBHOOK_BATCH = 16;

/** Runs a batch's jobs together; each settles alone: completed, or failed (and retried by its queue). */
async function settleEach<T>(jobs: Job<T>[], run: (job: Job<T>) => Promise<unknown>): Promise<JobResult[]> {
  return Promise.all(
    jobs.map(async (job): Promise<JobResult> => {
      try {
        await run(job);
        return { id: job.id, status: 'completed' };
      } catch (err) {
        const e = err as Error;
        return { id: job.id, status: 'failed', output: { message: e.message, stack: e.stack } };
      }
    }),
  );
}

/** Each handler calls one use case. */
export async function startWorkers(
  boss: PgBoss,
  svc: Services,
  opts: { pollingIntervalSeconds?: number } = {},
) {
  // Polled every half second (the queues do not notify, see queue.ts). A poll takes up to a batch of
  // jobs, and while batches come back full the next poll follows at once: one job per poll and
  // worker drained a backlog at 4 orders a second. The jobs of a batch run together and settle one
  // by one, so one failing order never fails (or retries) its neighbours.
  const polling = { pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5, burstWhenBatchFull: true };
  await boss.work<{ orderId: string }>(
    'issue-order',
    { ...polling, batchSize: ISSUE_BATCH, localConcurrency: 2, perJobResults: true },
    (jobs) =>
      settleEach(jobs, (job) =>
        issueOrder(svc, job.data.orderId, {
          finalAttempt: job.retryCount >= QUEUES['issue-order'].retryLimit,
        }),
      ),
  );
  await boss.work<{ orderId: string; trigger: 'completion' }>(
    'deliver-webhook',
    { ...polling, batchSize: WEBHOOK_BATCH, localConcurrency: 2, perJobResults: true },
    (jobs) => settleEach(jobs, (job) => deliverWebhook(svc, job.data.orderId, job.data.trigger)),
  );
  // The sweep is scheduled once a minute: looking for its job every half second is polling for nothing.
  await boss.work('expire-drafts', { pollingIntervalSeconds: 10 }, async () => {
    const n = await expireDrafts(svc);
    if (n > 0) svc.log.info({ expired: n }, 'drafts expired');
    await forgetExpiredKeys(svc);
  });
  await boss.schedule('expire-drafts', '* * * * *');
}
