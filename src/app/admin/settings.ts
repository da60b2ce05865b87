import { putSetting, readSpendingEnabled } from '../../db/repos/settings.ts';
import type { Db } from '../../db/schema.ts';
import { isoLocal } from '../../domain/time.ts';
import type { Services } from '../services.ts';
import { audit, type Actor } from '../actor.ts';

export const SPENDING_KEY = 'balance_spending_enabled';

/**
 * The operator's switch behind 403 `Balance spending is disabled`. Read from the database on
 * every payment (no cache), so a change holds at once on every instance sharing it.
 */
export async function balanceSpendingEnabled(db: Db): Promise<boolean> {
  return readSpendingEnabled(db, SPENDING_KEY);
}

export async function readSettings(svc: Services) {
  return { balance_spending_enabled: await balanceSpendingEnabled(svc.db) };
}

export async function changeSettings(
  svc: Services,
  actor: Actor,
  input: { balance_spending_enabled?: boolean },
) {
  if (input.balance_spending_enabled !== undefined) {
    const at = new Date(await svc.clock.now());
    const before = await readSettings(svc);
    await svc.db.transaction().execute(async (trx) => {
      await putSetting(trx, SPENDING_KEY, input.balance_spending_enabled, at);
      await audit(trx, actor, { action: 'settings.change', target: null, before, after: input, at });
    });
  }
  return readSettings(svc);
}

/** The sandbox clock, set by the operator (sandbox only): every use case reads its time from it. */
export async function setSandboxClock(svc: Services, actor: Actor, nowMs: number) {
  const before = await svc.clock.now();
  await svc.clock.set(nowMs);
  await audit(svc.db, actor, {
    action: 'sandbox.clock_set',
    target: null,
    before: { now: isoLocal(before) },
    after: { now: isoLocal(nowMs) },
    at: new Date(Date.now()),
  });
  return { now: isoLocal(await svc.clock.now()) };
}

export async function resetSandboxClock(svc: Services, actor: Actor) {
  const before = await svc.clock.now();
  await svc.clock.reset();
  await audit(svc.db, actor, {
    action: 'sandbox.clock_reset',
    target: null,
    before: { now: isoLocal(before) },
    at: new Date(),
  });
  return { now: isoLocal(await svc.clock.now()) };
}
