import { Type, type Static } from '@sinclair/typebox';
import { DomainError } from '../domain/errors.ts';
import {
  convertToBani,
  divRoundHalfUp,
  formatAmount,
  formatRate,
  parseDecimal,
  parseRate,
  RATE_SCALE,
  withMarginBp,
} from '../domain/money.ts';
import type { ProductContext } from './types.ts';

/**
 * The money of the products: catalogue amounts, the catalogue's exchange rates, and the pricing
 * steps of the products whose tariff is set in a foreign currency. Quote and create-order both go
 * through here, so a draft is priced exactly like the offer it came from.
 */

/** An amount in the catalogue: two decimals, as text ("4.00"). */
export const Amount = Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$', description: 'decimal, 2 places' });
/** A coefficient in the catalogue: two to four decimals, as text ("1.25"). */
export const Coefficient = Type.String({ pattern: '^[0-9]+\\.[0-9]{2,4}$', description: '10^4 scale' });

/** A catalogue amount in minor units ("4.00" → 400). */
export const minorOf = (amount: string): number => parseDecimal(amount, 2);

/** Minor units × a coefficient text ("1.25"), rounded half up to the minor unit. */
export const mulCoefficient = (minor: number, coefficient: string): number =>
  divRoundHalfUp(minor * parseRate(coefficient), RATE_SCALE);

/** The MDL rate of a currency, as the 10^4-scaled integer, from the catalogue. */
export function rateOf(ctx: ProductContext, currency: string): number {
  if (currency === 'MDL') return 10_000;
  const text = ctx.common.exchange_rates[currency];
  if (!text) throw new DomainError('product_rule', `no exchange rate for ${currency}`);
  return parseRate(text);
}

/** The rate as every product writes it: `1 RON 4.6302 MDL` (decision 0043). */
export function rateText(ctx: ProductContext, currency: string): string {
  return `1 ${currency} ${formatRate(rateOf(ctx, currency))} MDL`;
}

/** Minor units of a currency in bani, at the catalogue rate, rounded to the ban. */
export const toBani = (ctx: ProductContext, minor: number, currency: string): number =>
  convertToBani(minor, rateOf(ctx, currency));

/** The partner's final price: its margin on top of the provider price, rounded to the ban. */
export const finalPrice = (ctx: ProductContext, baseBani: number): number =>
  withMarginBp(baseBani, ctx.partner.marginBp);

export interface ConvertedPrice {
  /** The tariff in its own currency, minor units (the `reference_price`). */
  reference: number;
  currency: string;
  /** Provider price in bani: converted tariff + fee, before the partner margin. */
  base: number;
  /** Final price in bani, partner margin included. */
  price: number;
  /** `reference` and today's rate as the wire shows them. */
  reference_price: string;
  reference_exchange_rate: string;
}

/** The wire reference of a converted price: the tariff in its currency, and today's rate. */
export const convertedReference = (ctx: ProductContext, p: { reference: number; currency: string }) => ({
  reference_price: formatAmount(p.reference, p.currency),
  reference_exchange_rate: rateText(ctx, p.currency),
});

/**
 * A converted price as a draft stores it: its reference in minor units of its currency and the
 * rate text of the day it was priced. Issuance shows these, not today's tariff.
 */
export interface StoredConversion {
  reference: number;
  currency: string;
  rate: string;
}

export const storedConversion = (ctx: ProductContext, p: ConvertedPrice): StoredConversion => ({
  reference: p.reference,
  currency: p.currency,
  rate: rateText(ctx, p.currency),
});

/** The wire reference of a stored conversion. */
export const storedReference = (d: StoredConversion) => ({
  reference_price: formatAmount(d.reference, d.currency),
  reference_exchange_rate: d.rate,
});

/**
 * Insurance (green card, medical, baggage): tariff × coefficients in foreign minor units,
 * converted at the catalogue rate, plus the service fee, plus the partner margin.
 */
export function convertedPrice(
  ctx: ProductContext,
  reference: number,
  currency: string,
  feeMdl: string,
): ConvertedPrice {
  const base = toBani(ctx, reference, currency) + minorOf(feeMdl);
  return {
    reference,
    currency,
    base,
    price: finalPrice(ctx, base),
    ...convertedReference(ctx, { reference, currency }),
  };
}

/** A reseller fee on top of the converted tariff: a share in basis points, at least a minimum in MDL. */
export const FeeSchema = Type.Object({
  percent_bp: Type.Integer({ minimum: 0, maximum: 10_000 }),
  min_mdl: Amount,
});
export type Fee = Static<typeof FeeSchema>;

export interface EurPrice {
  /** Tariff in euro cents. */
  tariff: number;
  /** Tariff converted to bani at the catalogue rate. */
  converted: number;
  fee: number;
  /** converted + fee + partner margin, the price of the offer and of the draft alike. */
  price: number;
  reference_price: string;
  reference_exchange_rate: string;
}

/**
 * The EUR-tariffed products (vignette:md, vignette:eu, roadside assistance): tariff → MDL at the
 * catalogue rate, plus the reseller fee, plus the partner's margin, each step rounded to the ban.
 */
export function eurPrice(ctx: ProductContext, tariffText: string, currency: string, fee: Fee): EurPrice {
  const tariff = minorOf(tariffText);
  const converted = toBani(ctx, tariff, currency);
  const fee_ = Math.max(divRoundHalfUp(converted * fee.percent_bp, 10_000), minorOf(fee.min_mdl));
  return {
    tariff,
    converted,
    fee: fee_,
    price: finalPrice(ctx, converted + fee_),
    reference_price: formatAmount(tariff, currency),
    reference_exchange_rate: rateText(ctx, currency),
  };
}
