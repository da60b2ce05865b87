import { fromKysely, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { JobName, JobQueue } from '../app/services.ts';

export const QUEUES: Record<JobName, { retryLimit: number; retryDelay: number; expireInSeconds: number }> = {
  // Issuance retries transient provider failures; the last attempt marks the order failed.
  'issue-order': { retryLimit: 4, retryDelay: 2, expireInSeconds: 300 },
  // The spec allows one webhook attempt: no retry, even after a crash mid-delivery.
  'deliver-webhook': { retryLimit: 0, retryDelay: 0, expireInSeconds: 60 },
  'expire-drafts': { retryLimit: 0, retryDelay: 0, expireInSeconds: 300 },
};

/** pg-boss on the service's own database, in its own schema. */
export async function startBoss(database: Database, log: Logger): Promise<PgBoss> {
  const boss =
    database.boss.backend === 'pglite'
      ? new PgBoss({ db: database.boss.db, backend: 'pglite', schema: 'pgboss' })
      : new PgBoss({ connectionString: database.boss.connectionString, schema: 'pgboss', max: 4 });
  boss.on('error', (err) => log.error({ err }, 'job queue error'));
  await boss.start();
  for (const [name, opts] of Object.entries(QUEUES)) {
    await boss.createQueue(name, opts);
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
