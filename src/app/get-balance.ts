import { forbidden } from '../domain/errors.ts';
import { NO_WALLET } from '../domain/wallet.ts';
import { findWallet } from '../db/repos/wallets.ts';
import type { PartnerRow } from '../db/schema.ts';
import type { Services } from './services.ts';
import { balanceView } from './wallet-view.ts';

/** get-balance: read-only, so no lock; it reports the last committed balance. */
export async function getBalance(svc: Services, partner: PartnerRow) {
  const wallet = await findWallet(svc.db, partner.id);
  if (!wallet) throw forbidden(NO_WALLET);
  return balanceView(wallet, await svc.clock.now());
}
