import { takeQueuedIssuance } from '../db/repos/issuance-outbox.ts';
import type { Services } from './services.ts';

/** Orders turned into issue-order jobs by one transaction. */
export const ISSUANCE_BATCH = 500;

/**
 * Creates the issue-order jobs of up to {@link ISSUANCE_BATCH} orders queued in the issuance
 * outbox, in one transaction that also deletes their rows (rows another process is
 * dispatching are skipped): each queued order gets exactly one job, or, should the transaction
 * fail, stays queued for the next dispatch. Answers how many it took.
 */
export async function dispatchQueuedIssuance(svc: Services): Promise<number> {
  return svc.db.transaction().execute(async (trx) => {
    const orderIds = await takeQueuedIssuance(trx, ISSUANCE_BATCH);
    if (orderIds.length > 0) {
      await svc.jobs.enqueueMany(
        trx,
        'issue-order',
        orderIds.map((orderId) => ({ data: { orderId }, singletonKey: `issue:${orderId}` })),
      );
    }
    return orderIds.length;
  });
}
