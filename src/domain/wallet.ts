import { badRequest, forbidden, notPayable, orderNotFound, type DomainError } from './errors.ts';
import { paymentRefusal, type PayableOrder, type PaymentFacts, type PaymentRefusal } from './payment.ts';

/**
 * The wallet's rules (the partner API's pay-order-from-balance; decisions 0011, 0012 and 0065),
 * each defined here once. Amounts in bani. The statements that book a payment
 * (src/db/repos/wallet-payments.ts) are built from these definitions where they decide in SQL, and
 * test/wallet/equivalence.test.ts holds them to the same answers.
 */

/** The three sub-wallets of a partner's wallet (decision 0011), in the order statements list them. */
export const SUB_WALLETS = ['online', 'insurance', 'promo'] as const;
export type SubWallet = (typeof SUB_WALLETS)[number];

export const NO_WALLET = 'No wallet account linked to this partner';

/** The most one operator credit adds: 10 000 000.00 MDL, in bani (decision 0048). */
export const MAX_CREDIT_BANI = 1_000_000_000;
/** The most a sub-wallet may hold after an operator credit: 1 000 000 000.00 MDL (refunds always book). */
export const MAX_SUB_WALLET_BANI = 100_000_000_000;
export const SPENDING_DISABLED = 'Balance spending is disabled';
export const NOT_ELIGIBLE = 'Balance cannot be applied to this order';
export const INSUFFICIENT = 'Insufficient balance';

/**
 * The sub-wallets that pay orders, in the order they are tried: the first whose balance alone
 * covers the whole price pays it. No partial payment, no cover across sub-wallets; `insurance`
 * never pays.
 */
export const PAYING_SUB_WALLETS = ['promo', 'online'] as const;
export type SpendableWallet = (typeof PAYING_SUB_WALLETS)[number];
export type SpendableBalances = Readonly<Record<SpendableWallet, number>>;

/**
 * The sub-wallet that pays `price` from these balances; undefined when none alone covers it. A
 * free order is paid from the first (promo), which always covers it.
 */
export function payingSubWallet(balances: SpendableBalances, price: number): SpendableWallet | undefined {
  return PAYING_SUB_WALLETS.find((w) => balances[w] >= price);
}

/** A payment books a ledger entry only when it moves money: a free order books none. */
export const booksEntry = (price: number): boolean => price > 0;

/** The wallet pays an order only when every product of it is eligible (configuration: `wallet_eligible_products`). */
export const walletEligible = (products: readonly string[], eligible: readonly string[]): boolean =>
  products.every((p) => eligible.includes(p));

/**
 * The state change a wallet payment makes (allowed by TRANSITIONS, decision 0013) and its event:
 * the order goes `from` → `to`, its payment method becomes `method`, the event says `reason`.
 */
export const WALLET_PAYMENT = {
  from: 'draft',
  to: 'paid',
  method: 'wallet',
  reason: 'wallet payment',
} as const;

/** The payment a wallet payment records on the order, before the booking adds what it decided. */
export const walletPaymentRecord = (orderId: string, now: number) => ({
  transaction_id: `wallet:${orderId}`,
  paid_at: now,
  currency: 'MDL',
});

/** What the booking adds: the receipt names the ledger entry (0 when none was booked). */
export const RECEIPT_PREFIX = 'wallet:';

/** What the checks of decision 0012 read: the shared payment checks' facts and the wallet's own. */
export interface WalletPaymentFacts extends PaymentFacts {
  hasWallet: boolean;
  /** The operator's switch (on unless switched off). */
  spendingEnabled: boolean;
  order: (PayableOrder & { price: number }) | undefined;
  /** The products a wallet may pay for. */
  eligible: readonly string[];
}

/** The wallet's checks before the balance, in their precedence (decision 0012). */
export const WALLET_CHECKS = ['wallet', 'spending', 'order', 'window', 'status', 'eligible'] as const;
export type WalletCheck = (typeof WALLET_CHECKS)[number];

export interface WalletRefusal {
  check: WalletCheck | 'balance';
  error: DomainError;
}

/**
 * The first check of decision 0012 before the balance that refuses this payment, with its answer;
 * undefined when every one passes. A product's window answers 400 with its bare reason here.
 */
export function walletRefusal(f: WalletPaymentFacts): WalletRefusal | undefined {
  if (!f.hasWallet) return { check: 'wallet', error: forbidden(NO_WALLET) };
  if (!f.spendingEnabled) return { check: 'spending', error: forbidden(SPENDING_DISABLED) };
  const shared = paymentRefusal(f);
  if (shared) return { check: shared.check, error: sharedAnswer(shared) };
  if (!walletEligible(f.order!.products, f.eligible))
    return { check: 'eligible', error: badRequest(NOT_ELIGIBLE) };
  return undefined;
}

function sharedAnswer(r: PaymentRefusal): DomainError {
  switch (r.check) {
    case 'order':
      return orderNotFound();
    case 'window':
      return badRequest(r.reason);
    case 'status':
      return notPayable(r.status);
  }
}

/** The whole rule: refused by the first check that refuses, else paid from `payingSubWallet`, else 400 insufficient. */
export function walletVerdict(
  f: WalletPaymentFacts,
  balances: SpendableBalances,
): { pay: SpendableWallet } | WalletRefusal {
  const refused = walletRefusal(f);
  if (refused) return refused;
  const pay = payingSubWallet(balances, f.order!.price);
  return pay ? { pay } : { check: 'balance', error: badRequest(INSUFFICIENT) };
}
