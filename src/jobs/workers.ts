import type { Job, JobResult, PgBoss } from 'pg-boss';
import { deliverEvent, emitLegacyCompletion, redeliverEvent } from '../app/deliver-webhook.ts';
import { expireDrafts } from '../app/expire-drafts.ts';
import { purgeOldEvents } from '../app/partner-events.ts';
import { sendRenewalNotices } from '../app/renewal-notices.ts';
import { forgetExpiredKeys } from '../app/idempotency.ts';
import { issueOrder } from '../app/issue-order.ts';
import type { WebhookAttempts } from '../app/ops-counters.ts';
import { startReconciler } from '../app/reconcile-schedule.ts';
import type { Services } from '../app/services.ts';
import { ISSUE_PROVIDER_RETRIES } from './queue.ts';
import { WebhookDispatcher } from './webhook-dispatcher.ts';

/** Jobs a worker takes per poll: issuance is mostly waiting on the database, the provider and the PDF. */
const ISSUE_BATCH = 8;
/** Webhook attempts in flight on one instance, and to one partner across all instances. */
const WEBHOOK_IN_FLIGHT = 64;
const WEBHOOK_PER_PARTNER = 8;

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

export interface Workers {
  /** Issuance jobs were just created: fetch them now rather than at the next poll. */
  issuanceQueued(): void;
  /** Webhook delivery jobs were just created: the same. */
  deliveriesQueued(): void;
  stop(): Promise<void>;
}

/** Each handler calls one use case. The handle stops what pg-boss's own stop does not know of. */
export async function startWorkers(
  boss: PgBoss,
  svc: Services,
  opts: {
    pollingIntervalSeconds?: number;
    /** Counted here, exposed by /metrics. */
    webhookAttempts?: WebhookAttempts;
    /** Reconcile the books when no instance has for this long (decision 0056); undefined: never. */
    reconcileIntervalSeconds?: number;
  } = {},
): Promise<Workers> {
  // Polled every half second (the queues do not notify, see queue.ts). A poll takes up to a batch of
  // jobs, and while batches come back full the next poll follows at once: one job per poll could not
  // drain a backlog (decision 0025). The jobs of a batch run together and settle one
  // by one, so one failing order never fails (or retries) its neighbours.
  const polling = { pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5, burstWhenBatchFull: true };
  const issuer = await boss.work<{ orderId: string }>(
    'issue-order',
    { ...polling, batchSize: ISSUE_BATCH, localConcurrency: 2, perJobResults: true },
    (jobs) =>
      settleEach(jobs, (job) =>
        issueOrder(svc, job.data.orderId, {
          finalAttempt: job.retryCount >= ISSUE_PROVIDER_RETRIES,
        }),
      ),
  );
  const attempts = opts.webhookAttempts;
  const webhooks = new WebhookDispatcher(
    boss,
    'deliver-webhook',
    async (job) => {
      try {
        const result = !job.data.eventId
          ? await emitLegacyCompletion(svc, (job.data as { orderId?: string }).orderId)
          : job.data.resend
            ? await redeliverEvent(svc, job.data.eventId)
            : await deliverEvent(svc, job.data.eventId);
        // Undefined: nothing was attempted (the event was settled already).
        if (result) attempts?.add(result.delivered ? 'delivered' : 'failed');
        return result;
      } catch (err) {
        attempts?.add('error');
        throw err;
      }
    },
    svc.log,
    {
      maxInFlight: WEBHOOK_IN_FLIGHT,
      perPartner: WEBHOOK_PER_PARTNER,
      pollingIntervalMs: polling.pollingIntervalSeconds * 1000,
    },
  );
  webhooks.start();
  // The sweep is scheduled once a minute: looking for its job every half second is polling for nothing.
  await boss.work('expire-drafts', { pollingIntervalSeconds: 10 }, async () => {
    const n = await expireDrafts(svc);
    if (n > 0) svc.log.info({ expired: n }, 'drafts expired');
    await forgetExpiredKeys(svc);
  });
  await boss.schedule('expire-drafts', '* * * * *');
  // pg-boss keeps schedules in the database and makes one job a minute for all instances together:
  // the notices survive restarts and run once however many instances there are (decision 0092).
  await boss.work('renewal-notices', { pollingIntervalSeconds: 10 }, async () => {
    const n = await sendRenewalNotices(svc);
    if (n > 0) svc.log.info({ notices: n }, 'renewal notices made');
  });
  await boss.schedule('renewal-notices', '* * * * *');
  await boss.work('purge-events', { pollingIntervalSeconds: 30 }, async () => {
    const n = await purgeOldEvents(svc);
    if (n > 0) svc.log.info({ events: n }, 'events past their retention removed');
  });
  await boss.schedule('purge-events', '17 * * * *');
  const reconciler =
    opts.reconcileIntervalSeconds === undefined
      ? undefined
      : startReconciler(svc.db, opts.reconcileIntervalSeconds, svc.log);
  return {
    issuanceQueued: () => boss.notifyWorker(issuer),
    deliveriesQueued: () => webhooks.wake(),
    // Issuance first, waiting for the batches under way: what they complete queues webhook
    // deliveries, which the service's stop then flushes from the webhook outbox.
    async stop() {
      await boss.offWork('issue-order', { wait: true });
      await webhooks.stop();
      await reconciler?.stop();
    },
  };
}
