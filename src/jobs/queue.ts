import { fromKysely, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { JobName, JobQueue } from '../app/services.ts';

export const QUEUES: Record<
  JobName,
  {
    retryLimit: number;
    retryDelay: number;
    expireInSeconds: number;
    heartbeatSeconds?: number;
    /** On PGlite, a job sent wakes the workers at once (LISTEN/NOTIFY); polling stays as the backstop. */
    notify?: boolean;
  }
> = {
  // Issuance retries transient provider failures; the last attempt marks the order failed.
  // The heartbeat hands the job of a crashed (SIGKILLed) process back within ~20 s, where
  // expireInSeconds alone would wait 5 minutes; a slow but live issuance keeps beating.
  'issue-order': { retryLimit: 4, retryDelay: 2, expireInSeconds: 300, heartbeatSeconds: 10, notify: true },
  // The spec allows one webhook attempt: no retry, even after a crash mid-delivery.
  'deliver-webhook': { retryLimit: 0, retryDelay: 0, expireInSeconds: 60, notify: true },
  'expire-drafts': { retryLimit: 0, retryDelay: 0, expireInSeconds: 300 },
};

/** pg-boss on the service's own database, in its own schema. */
export async function startBoss(database: Database, log: Logger): Promise<PgBoss> {
  // Expired and heartbeat-less jobs are failed (then retried) by the monitor pass: every 10 s
  // rather than pg-boss's default 60 s, so a crash delays issuance by seconds, not minutes.
  // On PGlite, workers are woken by the NOTIFY of each job sent (in-process), so they need not poll
  // every half second: each poll held the one session, and the event loop, for milliseconds. Not on
  // PostgreSQL: a transaction that notifies takes a global lock to commit, and with every payment
  // enqueuing an issuance, wallet payments over 50 partners fell from 1 100/s to 250/s; polling
  // there runs on the server, beside the event loop.
  const notify = database.boss.backend === 'pglite';
  const supervision = { superviseIntervalSeconds: 10, monitorIntervalSeconds: 10, useListenNotify: notify };
  const boss =
    database.boss.backend === 'pglite'
      ? new PgBoss({ db: database.boss.db, backend: 'pglite', schema: 'pgboss', ...supervision })
      : new PgBoss({
          connectionString: database.boss.connectionString,
          schema: 'pgboss',
          max: 4,
          ...supervision,
        });
  boss.on('error', (err) => log.error({ err }, 'job queue error'));
  await boss.start();
  for (const [name, queue] of Object.entries(QUEUES)) {
    const opts = { ...queue, notify: notify && queue.notify === true };
    await boss.createQueue(name, opts);
    // createQueue leaves an existing queue as it was: changed options reach old databases here.
    await boss.updateQueue(name, opts);
    // createQueue/updateQueue evict pg-boss's queue cache, and a send that misses it looks the
    // queue up on pg-boss's own connection. On PGlite that connection waits behind the mutex the
    // enqueueing transaction holds: the first enqueue before any worker ran deadlocked. A lookup
    // of no job here fills the cache outside any transaction.
    await boss.deleteJob(name, '00000000-0000-0000-0000-000000000000');
  }
  return boss;
}

export function jobQueue(boss: PgBoss): JobQueue {
  return {
    async enqueue(trx, name, data, opts) {
      await boss.send(name, data, {
        db: fromKysely(trx),
        ...(opts?.startAfterSeconds ? { startAfter: opts.startAfterSeconds } : {}),
        ...(opts?.singletonKey ? { singletonKey: opts.singletonKey } : {}),
      });
    },
  };
}
