import { describe, expect, it } from 'vitest';
import { paymentRefusal } from '../../src/domain/payment.ts';
import {
  payingSubWallet,
  WALLET_CHECKS,
  walletRefusal,
  walletVerdict,
  type WalletCheck,
  type WalletPaymentFacts,
} from '../../src/domain/wallet.ts';

/**
 * The wallet's rules as pure functions (src/domain/wallet.ts): the precedence WALLET_CHECKS lists
 * is the one walletRefusal applies, and the sub-wallet rule at its edges. The statements are held
 * to the same rules on the database by equivalence.test.ts.
 */
const NOW = Date.parse('2026-11-21T10:00:00+02:00');
const WINDOW = { from: NOW - 1000, until: Infinity, reason: 'the tariff changed' };

/** Facts under which every check passes, with the given ones made to refuse. */
function facts(refusing: ReadonlySet<WalletCheck>): WalletPaymentFacts {
  return {
    partnerId: 'p',
    hasWallet: !refusing.has('wallet'),
    spendingEnabled: !refusing.has('spending'),
    order: {
      partnerId: refusing.has('order') ? 'someone else' : 'p',
      status: 'draft',
      createdAt: refusing.has('window') ? NOW - 2000 : NOW - 500,
      expiresAt: refusing.has('status') ? NOW : NOW + 1000,
      products: ['vignette:ro', refusing.has('eligible') ? 'road-tax' : 'rca'],
      price: 100,
    },
    windows: new Map([['vignette:ro', WINDOW]]),
    eligible: ['vignette:ro', 'rca'],
    now: NOW,
  };
}

describe('the wallet’s checks', () => {
  it('refuse by the first that applies, in the order WALLET_CHECKS lists', () => {
    // Every check refusing, then one fewer at a time from the front: each time the first left answers.
    for (let k = 0; k < WALLET_CHECKS.length; k++) {
      const refusing = new Set(WALLET_CHECKS.slice(k));
      expect(walletRefusal(facts(refusing))?.check).toBe(WALLET_CHECKS[k]);
    }
    expect(walletRefusal(facts(new Set()))).toBeUndefined();
  });

  it('answer each refusal as decision 0012 says', () => {
    const answer = (check: WalletCheck) => {
      const error = walletRefusal(facts(new Set([check])))!.error;
      return [error.code, error.reason];
    };
    expect(WALLET_CHECKS.map(answer)).toEqual([
      ['forbidden', 'No wallet account linked to this partner'],
      ['forbidden', 'Balance spending is disabled'],
      ['not_found', 'Order not found'],
      ['bad_request', 'the tariff changed'],
      ['bad_request', 'Order is not payable (status expired)'],
      ['bad_request', 'Balance cannot be applied to this order'],
    ]);
  });

  it('leave a product’s window out for an order that is neither a draft nor expired', () => {
    const f = facts(new Set(['window']));
    expect(paymentRefusal({ ...f, order: { ...f.order!, status: 'paid' } })).toEqual({
      check: 'status',
      status: 'paid',
    });
  });
});

describe('the sub-wallet that pays', () => {
  it('is promo when it alone covers the price, else online when it alone does, else none', () => {
    expect(payingSubWallet({ promo: 100, online: 0 }, 100)).toBe('promo');
    expect(payingSubWallet({ promo: 99, online: 100 }, 100)).toBe('online');
    expect(payingSubWallet({ promo: 99, online: 99 }, 100)).toBeUndefined();
    expect(payingSubWallet({ promo: 0, online: 0 }, 0)).toBe('promo');
  });

  it('is chosen only after every check passed', () => {
    const rich = { promo: 1000, online: 1000 };
    expect(walletVerdict(facts(new Set(['eligible'])), rich)).toMatchObject({ check: 'eligible' });
    expect(walletVerdict(facts(new Set()), rich)).toEqual({ pay: 'promo' });
    expect(walletVerdict(facts(new Set()), { promo: 0, online: 0 })).toMatchObject({
      check: 'balance',
      error: { code: 'bad_request', reason: 'Insufficient balance' },
    });
  });
});
