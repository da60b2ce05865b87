import { Type, type Static } from '@sinclair/typebox';
import { convertToBani, divRoundHalfUp, formatAmount, parseDecimal } from '../domain/money.ts';
import { finalPrice, rateOf, rateText } from './shared.ts';
import type { ProductContext } from './types.ts';

/** A tariff amount in the catalogue: EUR with two decimals, as text ("4.00"). */
export const Amount = Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$' });

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
 * The one pricing rule of the EUR-tariffed products: tariff → MDL at the catalogue rate, plus the
 * reseller fee, plus the partner's margin, each step rounded to the ban. Quote and create-order
 * both call it, so a draft always costs what the offer said.
 */
export function eurPrice(ctx: ProductContext, tariffText: string, currency: string, fee: Fee): EurPrice {
  const tariff = parseDecimal(tariffText, 2);
  const converted = convertToBani(tariff, rateOf(ctx, currency));
  const fee_ = Math.max(divRoundHalfUp(converted * fee.percent_bp, 10_000), parseDecimal(fee.min_mdl, 2));
  return {
    tariff,
    converted,
    fee: fee_,
    price: finalPrice(ctx, converted + fee_),
    reference_price: formatAmount(tariff, currency),
    reference_exchange_rate: rateText(ctx, currency),
  };
}
