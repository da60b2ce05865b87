import { Type, type Static } from '@sinclair/typebox';
import { divRoundHalfUp, parseDecimal, type Minor } from '../domain/money.ts';
import { daysBetween } from '../domain/time.ts';

/**
 * What a partner may cancel, and for how much: each product's `cancellation` in its catalogue file
 * (catalogue/<code>.json), which the operator edits like the tariff. The one place these rules are
 * read and applied (decision 0087); the cancel-order use case only asks this module.
 *
 * - `before_start`: before the policy's first day (Chișinău date), `full` refund or `none`.
 * - `after_start`: from the first day, `none` (not cancellable) or `pro_rata` (the days left).
 * - `fee_percent`: withheld from a pro rata refund, a decimal percentage of that part.
 */
export const CancellationRuleSchema = Type.Object(
  {
    before_start: Type.Union([Type.Literal('full'), Type.Literal('none')]),
    after_start: Type.Union([Type.Literal('pro_rata'), Type.Literal('none')]),
    fee_percent: Type.String({ pattern: '^(100|[0-9]{1,2})(\\.[0-9]{1,2})?$' }),
  },
  { additionalProperties: false },
);
export type CancellationRule = Static<typeof CancellationRuleSchema>;

/** The part of a product's catalogue file this module reads. */
export const CancellationCatalogueSchema = Type.Object({ cancellation: CancellationRuleSchema });

/** One product of an order, as the rules need it. */
export interface CancellableItem {
  product: string;
  price: Minor;
  startDate: string | null;
  endDate: string | null;
}

export type ItemTerms =
  { cancellable: true; refund: Minor; fee: Minor } | { cancellable: false; reason: string };

export type CancellationTerms =
  { cancellable: true; refund: Minor; fee: Minor } | { cancellable: false; reason: string };

/**
 * One product's refund on `today` (a Chișinău date). A product without dates starts the day it was
 * issued (`issuedOn`): a road tax paid is paid from that day.
 *
 * Pro rata counts whole days, as the policy does: the days after today up to and including the
 * last, over the days of the policy, first and last included; the fee is a share of that part.
 * Both are rounded half up to the ban, the fee from the rounded part, so the refund and the fee add
 * up to the part exactly (decision 0087).
 */
export function itemTerms(
  rule: CancellationRule,
  item: CancellableItem,
  today: string,
  issuedOn: string,
): ItemTerms {
  const start = item.startDate ?? issuedOn;
  if (today < start) {
    if (rule.before_start === 'full') return { cancellable: true, refund: item.price, fee: 0 };
    return { cancellable: false, reason: `A ${item.product} policy cannot be cancelled` };
  }
  if (rule.after_start === 'none') {
    return {
      cancellable: false,
      reason: `A ${item.product} policy cannot be cancelled from its first day (${start})`,
    };
  }
  const end = item.endDate ?? start;
  const left = daysBetween(today, end);
  if (left <= 0) return { cancellable: false, reason: `The ${item.product} policy has ended (${end})` };
  const total = daysBetween(start, end) + 1;
  const part = divRoundHalfUp(item.price * left, total);
  const fee = divRoundHalfUp(part * parseDecimal(rule.fee_percent, 2), 100 * 100);
  return { cancellable: true, refund: part - fee, fee };
}

/**
 * A whole order's terms: it cancels whole or not at all, its refund the sum of its products'. The
 * first product that may not be cancelled gives the reason.
 */
export function orderTerms(
  rules: ReadonlyMap<string, CancellationRule>,
  items: readonly CancellableItem[],
  today: string,
  issuedOn: string,
): CancellationTerms {
  let refund = 0;
  let fee = 0;
  for (const item of items) {
    const rule = rules.get(item.product);
    if (!rule) return { cancellable: false, reason: `A ${item.product} policy cannot be cancelled` };
    const t = itemTerms(rule, item, today, issuedOn);
    if (!t.cancellable) return t;
    refund += t.refund;
    fee += t.fee;
  }
  return { cancellable: true, refund, fee };
}
