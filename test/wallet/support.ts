import { expect } from 'vitest';
import { RCA_QUOTE, rcaItem, type Creds, type Harness } from '../support/harness.ts';

/** Helpers shared by the wallet test files (each file still boots its own single harness). */
export interface RcaOffer {
  price: number;
  company: string;
  min_start_date: string;
}

export async function rcaOffers(h: Harness, creds?: Creds): Promise<RcaOffer[]> {
  const q = await h.call<{ offers: RcaOffer[] }>('get-offers', RCA_QUOTE, creds);
  expect(q.status, JSON.stringify(q.body)).toBe(200);
  return q.body.offers;
}

/** A fresh RCA draft of `creds` priced as `offer`. */
export async function rcaDraft(
  h: Harness,
  offer: RcaOffer,
  creds?: Creds,
  over: Record<string, unknown> = {},
): Promise<{ id: string; price: number }> {
  const res = await h.call(
    'create-order',
    {
      customer: { phone: '+37369000000' },
      products: [rcaItem(offer.min_start_date, { insurance_company: offer.company, ...over })],
    },
    creds,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, price: res.body.price as number };
}

export async function credit(
  h: Harness,
  partnerId: string,
  wallet: 'online' | 'promo' | 'insurance',
  amount: number,
  reference = `ref-${Math.random().toString(36).slice(2)}`,
) {
  const res = await h.admin('POST', `/admin/partners/${partnerId}/wallet/credits`, {
    wallet,
    amount,
    reference,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function balance(h: Harness, creds?: Creds) {
  const res = await h.call<{
    balance: number;
    wallets: { online: number; promo: number; insurance: number };
  }>('get-balance', {}, creds);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The wire error shape of decision 0001 with the reason in both fields. */
export const reasonError = (statusCode: number, reason: string) => ({
  statusCode,
  error: reason,
  message: reason,
});

/**
 * `count` payment attempts over the drafts (each draft in turn), shuffled: two in three from the
 * wallet (pay-order-from-balance), one in three a customer payment (confirm-order).
 */
export function shuffledAttempts<D>(drafts: D[], count: number): { d: D; wallet: boolean }[] {
  const attempts = Array.from({ length: count }, (_, i) => ({
    d: drafts[i % drafts.length]!,
    wallet: i % 3 !== 0,
  }));
  for (let i = attempts.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [attempts[i], attempts[j]] = [attempts[j]!, attempts[i]!];
  }
  return attempts;
}
