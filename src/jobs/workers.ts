import type { PgBoss } from 'pg-boss';
import { deliverWebhook } from '../app/deliver-webhook.ts';
import { expireDrafts } from '../app/expire-drafts.ts';
import { issueOrder } from '../app/issue-order.ts';
import type { Services } from '../app/services.ts';
import { QUEUES } from './queue.ts';

/** Each handler calls one use case. */
export async function startWorkers(
  boss: PgBoss,
  svc: Services,
  opts: { pollingIntervalSeconds?: number } = {},
) {
  // Half a second without LISTEN/NOTIFY (a pooler that cannot hold it); with it, new jobs wake the
  // workers at once and the 2 s poll finds the retried and delayed jobs, which send no NOTIFY.
  const polling = {
    pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5,
    notifyPollingIntervalSeconds: opts.pollingIntervalSeconds ?? 2,
  };
  await boss.work<{ orderId: string }>('issue-order', { ...polling, localConcurrency: 2 }, async ([job]) => {
    if (!job) return;
    await issueOrder(svc, job.data.orderId, {
      finalAttempt: job.retryCount >= QUEUES['issue-order'].retryLimit,
    });
  });
  await boss.work<{ orderId: string; trigger: 'completion' }>(
    'deliver-webhook',
    { ...polling, localConcurrency: 4 },
    async ([job]) => {
      if (!job) return;
      await deliverWebhook(svc, job.data.orderId, job.data.trigger);
    },
  );
  // The sweep is scheduled once a minute: looking for its job every half second is polling for nothing.
  await boss.work('expire-drafts', { pollingIntervalSeconds: 10 }, async () => {
    const n = await expireDrafts(svc);
    if (n > 0) svc.log.info({ expired: n }, 'drafts expired');
  });
  await boss.schedule('expire-drafts', '* * * * *');
}
