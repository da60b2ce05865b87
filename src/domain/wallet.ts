/** Wallet rules (the partner API's pay-order-from-balance; decisions 0011, 0012). Amounts in bani. */
export const NO_WALLET = 'No wallet account linked to this partner';
export const SPENDING_DISABLED = 'Balance spending is disabled';
export const INSUFFICIENT = 'Insufficient balance';

export type SpendableWallet = 'promo' | 'online';
