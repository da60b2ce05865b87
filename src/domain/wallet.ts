import { badRequest } from './errors.ts';

/** Wallet rules (spec, pay-order-from-balance; decisions.md §5). Amounts in bani. */
export const NO_WALLET = 'No wallet account linked to this partner';
export const SPENDING_DISABLED = 'Balance spending is disabled';
export const INSUFFICIENT = 'Insufficient balance';

export type SpendableWallet = 'promo' | 'online';

/**
 * One wallet pays the whole price: promo when it alone covers it, else online when it alone
 * covers it. No partial payment, no cover across wallets; insurance never pays an order.
 */
export function pickSubWallet(balances: { promo: number; online: number }, price: number): SpendableWallet {
  if (balances.promo >= price) return 'promo';
  if (balances.online >= price) return 'online';
  throw badRequest(INSUFFICIENT);
}
