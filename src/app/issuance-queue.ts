import { takeQueuedIssuance } from '../db/repos/issuance-outbox.ts';
import { dispatchOutbox } from './outbox-dispatch.ts';
import type { Services } from './services.ts';

/** Orders turned into issue-order jobs by one transaction. */
export const ISSUANCE_BATCH = 500;

const issueJob = (orderId: string) => ({ data: { orderId }, singletonKey: `issue:${orderId}` });

/**
 * Creates the issue-order jobs of up to {@link ISSUANCE_BATCH} orders queued in the issuance
 * outbox, one a queued order, deleting their rows in the same transaction (see dispatchOutbox).
 * Answers how many it took.
 */
export function dispatchQueuedIssuance(svc: Services): Promise<number> {
  return dispatchOutbox(svc, takeQueuedIssuance, ISSUANCE_BATCH, 'issue-order', issueJob);
}
