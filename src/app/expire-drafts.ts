import { expireDrafts as expireDue } from '../db/repos/orders.ts';
import type { Services } from './services.ts';
import { emitOrderEvent } from './webhook-events.ts';

/**
 * Persists the expiry of drafts whose 23:59:59 has passed. Reads already treat them as expired
 * from that instant; this sweep makes the stored status agree, and
 * sends the `expired` event to partners who receive it.
 */
export async function expireDrafts(svc: Services): Promise<number> {
  const now = new Date(await svc.clock.now());
  let total = 0;
  for (;;) {
    const ids = await svc.db.transaction().execute(async (trx) => {
      const expired = await expireDue(trx, now, 500);
      for (const order of expired) await emitOrderEvent(svc, trx, order, 'expired', now);
      return expired;
    });
    total += ids.length;
    if (ids.length < 500) return total;
  }
}
