import { baniToMdl } from '../domain/money.ts';
import { isoLocal } from '../domain/time.ts';
import type { WalletRow } from '../db/schema.ts';

/** The wallet balance resource of get-balance: `balance` is what can be spent (online + promo). */
export function balanceView(w: WalletRow, now: number) {
  return {
    balance: baniToMdl(w.online + w.promo),
    currency: 'MDL' as const,
    wallets: { online: baniToMdl(w.online), insurance: baniToMdl(w.insurance), promo: baniToMdl(w.promo) },
    updated_at: isoLocal(now),
  };
}
