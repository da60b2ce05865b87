import { ping } from '../db/database.ts';
import { queuedIssuance } from '../db/repos/issuance-outbox.ts';
import { countOrdersByStatus, findDocumentAndStatus, oldestAwaitingIssue } from '../db/repos/orders.ts';
import { reconciliationStatus } from './reconcile-schedule.ts';
import type { Services } from './services.ts';

/** What monitoring reads: readiness, the policy documents by their URL, the order counts, the backlogs. */
export async function databaseReachable(svc: Services): Promise<boolean> {
  // While it is known to be away, the health watch's own probe decides: no request waits on the pool.
  if (!svc.health.up) return false;
  try {
    await ping(svc.db);
    return true;
  } catch (err) {
    svc.health.report(err);
    return false;
  }
}

/**
 * A policy PDF by the file name of its URL (`<token>.pdf`, the token 128 random bits or more):
 * knowing the URL is the permission, as the URL is what the partner was given. `refunded`: the
 * order was refunded, so the policy is cancelled and the public URL no longer hands it out
 * (decision 0049); the operator still opens it through the console.
 */
export async function policyDocument(
  svc: Services,
  fileName: string,
): Promise<{ pdf: Uint8Array; refunded: boolean; replaced: boolean } | undefined> {
  const m = /^([0-9a-f]{32,64})\.pdf$/.exec(fileName);
  const found = m ? await findDocumentAndStatus(svc.db, m[1]!) : undefined;
  return (
    found && { pdf: found.pdf, refunded: found.status === 'refunded', replaced: found.replaced_at !== null }
  );
}

export const ordersByStatus = (svc: Services) => countOrdersByStatus(svc.db);

/** The issuance outbox's depth and the age of its oldest row, by the service clock. */
export async function issuanceOutboxDepth(svc: Services): Promise<{ count: number; oldestSeconds: number }> {
  const { count, oldest } = await queuedIssuance(svc.db);
  const now = await svc.clock.now();
  return { count, oldestSeconds: oldest ? Math.max(0, (now - oldest.getTime()) / 1000) : 0 };
}

/** The age of the oldest paid order not yet issued (paid or processing), by the service clock. */
export async function issuanceBacklog(svc: Services): Promise<{ oldestSeconds: number }> {
  const oldest = await oldestAwaitingIssue(svc.db);
  const now = await svc.clock.now();
  return { oldestSeconds: oldest ? Math.max(0, (now - oldest.getTime()) / 1000) : 0 };
}

/** The last reconciliation by any instance, as the metrics expose it. */
export async function lastReconciliation(
  svc: Services,
): Promise<{ differences: number; lastRunSeconds: number }> {
  const s = await reconciliationStatus(svc.db);
  return { differences: s.differences, lastRunSeconds: s.ranAt ? s.ranAt.getTime() / 1000 : 0 };
}
