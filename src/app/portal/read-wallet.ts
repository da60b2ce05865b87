import { badRequest } from '../../domain/errors.ts';
import { addDays, isValidDate, localDate, localInstant } from '../../domain/time.ts';
import { ledgerPageBetween } from '../../db/repos/portal-ledger.ts';
import { findWallet } from '../../db/repos/wallets.ts';
import { ledgerLine } from '../admin/directory.ts';
import type { Services } from '../services.ts';
import { balanceView } from '../wallet-view.ts';
import type { PortalUser } from './roles.ts';

/** The longest period a page or an export covers, as the operator's statement. */
const MAX_DAYS = 366 * 5;

/**
 * A period of local calendar days (Europe/Chisinau), `from`..`to` inclusive; by default this month
 * up to today, by the service clock (the one orders are dated by).
 */
export async function periodOf(svc: Services, q: { from?: string; to?: string }) {
  const today = localDate(await svc.clock.now());
  const from = q.from ?? `${today.slice(0, 8)}01`;
  const to = q.to ?? today;
  if (!isValidDate(from) || !isValidDate(to)) throw badRequest('From and To must be dates, like 2026-09-30');
  if (from > to) throw badRequest('From must not be after To');
  if (addDays(from, MAX_DAYS) < to) throw badRequest(`A period covers at most ${MAX_DAYS} days`);
  return { from, to };
}

/**
 * The partner's wallet: balances per sub-wallet and its ledger entries of a period, newest first,
 * cursor-paged. Null when the partner has no prepaid wallet.
 */
export async function readWallet(
  svc: Services,
  user: PortalUser,
  q: { from?: string; to?: string; cursor?: string; limit?: number },
) {
  const period = await periodOf(svc, q);
  const beforeId = q.cursor === undefined ? undefined : Number(q.cursor);
  if (beforeId !== undefined && !(Number.isSafeInteger(beforeId) && beforeId > 0)) {
    throw badRequest('cursor is not valid');
  }
  const wallet = await findWallet(svc.db, user.partnerId);
  if (!wallet) return { period, wallet: null };
  const limit = q.limit ?? 50;
  const rows = await ledgerPageBetween(svc.db, user.partnerId, {
    from: new Date(localInstant(period.from, '00:00:00')),
    to: new Date(localInstant(addDays(period.to, 1), '00:00:00')),
    limit: limit + 1,
    ...(beforeId !== undefined ? { beforeId } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    period,
    wallet: {
      ...balanceView(wallet, await svc.clock.now()),
      ledger: page.map(ledgerLine),
      next_cursor: rows.length > limit ? String(page.at(-1)!.id) : null,
    },
  };
}
