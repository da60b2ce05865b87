import { badRequest, notFound } from '../../domain/errors.ts';
import { baniToMdl } from '../../domain/money.ts';
import { isoLocal } from '../../domain/time.ts';
import { searchPartners } from '../../db/repos/partners.ts';
import { findWallet, ledgerPage, type LedgerRow } from '../../db/repos/wallets.ts';
import type { Services } from '../services.ts';
import { csvCell, type StatementLine } from '../wallet-statement.ts';
import { balanceView } from '../wallet-view.ts';
import { partnerView } from './partners.ts';

/** The operator's lists beyond orders: partners (searchable) and a partner's wallet with its ledger. */
export async function listPartners(svc: Services, q: { q?: string; cursor?: string; limit?: number }) {
  const limit = q.limit ?? 50;
  if (q.cursor !== undefined && !/^[a-z0-9][a-z0-9_-]{1,63}$/.test(q.cursor)) {
    throw badRequest('cursor is not valid');
  }
  const rows = await searchPartners(svc.db, {
    limit: limit + 1,
    ...(q.q ? { q: q.q } : {}),
    ...(q.cursor ? { afterId: q.cursor } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    partners: page.map((p) => partnerView(p, Boolean(p.has_wallet), svc.config.rateLimitPerMinute)),
    next_cursor: rows.length > limit ? page.at(-1)!.id : null,
  };
}

/** A ledger entry as the statement shows one. */
export const ledgerLine = (r: LedgerRow): StatementLine => ({
  id: r.id,
  at: isoLocal(r.created_at.getTime()),
  wallet: r.wallet,
  kind: r.kind,
  amount: baniToMdl(r.amount),
  balance_after: baniToMdl(r.balance_after),
  order_id: r.order_id,
  reference: r.reference,
  actor: r.actor,
});

/** A partner's balances and its ledger, newest entry first, cursor-paged. */
export async function partnerWallet(
  svc: Services,
  partnerId: string,
  q: { cursor?: string; limit?: number },
) {
  const limit = q.limit ?? 50;
  const beforeId = q.cursor === undefined ? undefined : Number(q.cursor);
  if (beforeId !== undefined && !(Number.isSafeInteger(beforeId) && beforeId > 0)) {
    throw badRequest('cursor is not valid');
  }
  const wallet = await findWallet(svc.db, partnerId);
  if (!wallet) throw notFound(`Partner ${partnerId} has no wallet`);
  const rows = await ledgerPage(svc.db, partnerId, {
    limit: limit + 1,
    ...(beforeId !== undefined ? { beforeId } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    partner_id: partnerId,
    ...balanceView(wallet, await svc.clock.now()),
    ledger: page.map(ledgerLine),
    next_cursor: rows.length > limit ? String(page.at(-1)!.id) : null,
  };
}

/** The ledger page as CSV (one row an entry, newest first), for a spreadsheet. */
export function ledgerCsv(w: Awaited<ReturnType<typeof partnerWallet>>): string {
  const head = [
    'entry_id',
    'at',
    'wallet',
    'kind',
    'amount',
    'balance_after',
    'order_id',
    'reference',
    'actor',
  ];
  const rows = w.ledger.map((l) =>
    [l.id, l.at, l.wallet, l.kind, l.amount, l.balance_after, l.order_id, l.reference, l.actor]
      .map(csvCell)
      .join(','),
  );
  return `${[head.join(','), ...rows].join('\r\n')}\r\n`;
}
