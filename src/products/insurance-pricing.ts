import { Type } from '@sinclair/typebox';
import { convertToBani, divRoundHalfUp, parseDecimal, parseRate, RATE_SCALE } from '../domain/money.ts';
import { finalPrice, rateOf } from './shared.ts';
import type { ProductContext } from './types.ts';

/**
 * Pricing steps shared by the products whose tariff is set in a foreign currency (green card,
 * medical, baggage): tariff × coefficients in foreign minor units, converted at the catalogue
 * rate, plus the service fee, plus the partner margin. Quote and create-order both go through
 * here, so a draft is priced exactly like the offer it came from.
 */
export const Amount = Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$', description: 'decimal, 2 places' });
export const Coefficient = Type.String({ pattern: '^[0-9]+\\.[0-9]{2,4}$', description: '10^4 scale' });

/** Minor units × a coefficient text ("1.25"), rounded half up to the minor unit. */
export const mulCoefficient = (minor: number, coefficient: string): number =>
  divRoundHalfUp(minor * parseRate(coefficient), RATE_SCALE);

export const minorOf = (amount: string): number => parseDecimal(amount, 2);

export interface ConvertedPrice {
  /** The tariff in its own currency, minor units (the `reference_price`). */
  reference: number;
  currency: string;
  /** Provider price in bani: converted tariff + fee, before the partner margin. */
  base: number;
  /** Final price in bani, partner margin included. */
  price: number;
}

export function convertedPrice(
  ctx: ProductContext,
  reference: number,
  currency: string,
  feeMdl: string,
): ConvertedPrice {
  const base = convertToBani(reference, rateOf(ctx, currency)) + minorOf(feeMdl);
  return { reference, currency, base, price: finalPrice(ctx, base) };
}
