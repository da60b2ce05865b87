import { fromKysely, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { JobName, JobQueue } from '../app/services.ts';
import type { Outbox } from './outbox.ts';

export const QUEUES: Record<
  JobName,
  { retryLimit: number; retryDelay: number; expireInSeconds: number; heartbeatSeconds?: number }
> = {
  // Issuance retries transient provider failures; the last attempt marks the order failed.
  // The heartbeat hands the job of a crashed (SIGKILLed) process back within ~20 s, where
  // expireInSeconds alone would wait 5 minutes; a slow but live issuance keeps beating.
  // Four retries decide for the provider (ISSUE_PROVIDER_RETRIES); the rest are for a database that
  // was away, which never fails an order (decision 0052): while it is away no job is fetched, so
  // only the attempts it cut off spend one each.
  'issue-order': { retryLimit: 60, retryDelay: 2, expireInSeconds: 300, heartbeatSeconds: 10 },
  // One job per attempt of an event: a failed attempt enqueues the next one itself, after the delay
  // of WEBHOOK_RETRY_SCHEDULE. The queue's own retries only cover a job that threw (the database
  // went away) or whose process died mid-attempt (expired after 60 s): at least once, never lost.
  'deliver-webhook': { retryLimit: 30, retryDelay: 10, expireInSeconds: 60 },
  'expire-drafts': { retryLimit: 0, retryDelay: 0, expireInSeconds: 300 },
  // Scheduled, each run picking up where the last left off (decisions 0091, 0092): a failed run
  // needs no retry, the next one does its work.
  'renewal-notices': { retryLimit: 0, retryDelay: 0, expireInSeconds: 900 },
  'purge-events': { retryLimit: 0, retryDelay: 0, expireInSeconds: 900 },
};

/**
 * Retries of an issue-order job after which a failure that is not the database's fails the order
 * (decision 0014): the provider had its chances.
 */
export const ISSUE_PROVIDER_RETRIES = 4;

/** pg-boss on the service's own pool, in its own schema. */
export async function startBoss(database: Database, log: Logger): Promise<PgBoss> {
  // Expired and heartbeat-less jobs are failed (then retried) by the monitor pass: every 10 s
  // rather than pg-boss's default 60 s, so a crash delays issuance by seconds, not minutes.
  // Workers poll rather than LISTEN: a transaction that sends NOTIFY takes a global lock to commit,
  // and every payment queues an issuance, so wallet payments would queue on that lock (decision
  // 0024). Polling runs on the server, beside the event loop.
  const boss = new PgBoss({
    db: database.boss,
    schema: 'pgboss',
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
  });
  // Its workers and maintenance poll on: while the database is away each poll fails, which the
  // health watch says once (decision 0050); pg-boss carries on by itself when it is back.
  boss.on('error', (err) => {
    if (database.health.report(err)) log.debug({ err }, 'job queue error');
    else log.error({ err }, 'job queue error');
  });
  await boss.start();
  for (const [name, queue] of Object.entries(QUEUES)) {
    await boss.createQueue(name, queue);
    // createQueue leaves an existing queue as it was: changed options reach old databases here.
    await boss.updateQueue(name, queue);
  }
  return boss;
}

/** Without outboxes (the command line), what is queued waits for the service's next poll of them. */
export function jobQueue(boss: PgBoss, outboxes?: { issuance: Outbox; webhooks: Outbox }): JobQueue {
  return {
    issuanceQueued: () => outboxes?.issuance.kick(),
    deliveriesQueued: () => outboxes?.webhooks.kick(),
    async enqueueMany(trx, name, jobs) {
      await boss.insert(
        name,
        jobs.map(({ group, ...job }) => (group ? { ...job, group: { id: group } } : job)),
        { db: fromKysely(trx) },
      );
    },
    async enqueue(trx, name, data, opts) {
      await boss.send(name, data, {
        db: fromKysely(trx),
        ...(opts?.startAfterSeconds ? { startAfter: opts.startAfterSeconds } : {}),
        ...(opts?.singletonKey ? { singletonKey: opts.singletonKey } : {}),
        ...(opts?.group ? { group: { id: opts.group } } : {}),
      });
    },
  };
}
