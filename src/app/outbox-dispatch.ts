import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { JobName, JobQueue, Services } from './services.ts';

/** One job of {@link JobQueue.enqueueMany}. */
type NewJob = Parameters<JobQueue['enqueueMany']>[2][number];

/**
 * Creates the `queue` jobs of up to `batch` rows queued in an outbox table, in one transaction in
 * which `take` also deletes their rows (rows another process is dispatching are skipped): each row
 * gets exactly one job, made by `jobOf`, or, should the transaction fail, stays queued for the next
 * dispatch. Answers how many it took: src/jobs/outbox.ts dispatches again while that is `batch`.
 */
export async function dispatchOutbox<Row>(
  svc: Pick<Services, 'db' | 'jobs'>,
  take: (trx: Transaction<DB>, limit: number) => Promise<Row[]>,
  batch: number,
  queue: JobName,
  jobOf: (row: Row) => NewJob,
): Promise<number> {
  return svc.db.transaction().execute(async (trx) => {
    const rows = await take(trx, batch);
    if (rows.length > 0) await svc.jobs.enqueueMany(trx, queue, rows.map(jobOf));
    return rows.length;
  });
}
