import type { Services } from '../services.ts';
import { statementCsv, walletStatement } from '../wallet-statement.ts';
import { periodOf } from './read-wallet.ts';
import type { PortalUser } from './roles.ts';

/**
 * The wallet statement of a period as CSV, the operator's statement CSV exactly (opening balances,
 * every entry with its running balance, closing balances): what a bookkeeping import takes.
 */
export async function exportStatement(svc: Services, user: PortalUser, q: { from?: string; to?: string }) {
  const period = await periodOf(svc, q);
  const statement = await walletStatement(svc, { partnerId: user.partnerId, ...period });
  return { ...period, csv: statementCsv(statement) };
}
