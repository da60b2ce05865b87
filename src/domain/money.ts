/**
 * Money is an integer number of minor units everywhere inside the service: bani for MDL
 * (1 MDL = 100 bani), cents for EUR and RON. Exchange rates are integers scaled by 10^4
 * ("19.3033" → 193033). Floats appear only at the wire, through mdlToBani/baniToMdl.
 */
export type Minor = number;

export const RATE_SCALE = 10_000;

/** Divide non-negative integers rounding half up, without leaving integer arithmetic. */
export function divRoundHalfUp(numerator: number, denominator: number): number {
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0) {
    throw new RangeError(`divRoundHalfUp needs safe integers, got ${numerator}/${denominator}`);
  }
  const sign = numerator < 0 ? -1 : 1;
  const n = Math.abs(numerator);
  return sign * Math.floor((2 * n + denominator) / (2 * denominator));
}

/**
 * A wire amount in MDL with at most 2 decimals, or null when it has more. Within the bounds the
 * callers hold amounts to (decision 0048) the product by 100 is exact to far better than the 1e-6
 * allowed, so a partner's 0.1 + 0.2 is 30 bani, and 1.005 is refused.
 */
export function mdlToBani(amount: number): Minor | null {
  if (!Number.isFinite(amount)) return null;
  const scaled = Math.round(amount * 100);
  // Beyond 2^53 bani integers stop being exact: such an amount is refused, not rounded.
  if (!Number.isSafeInteger(scaled) || Math.abs(amount * 100 - scaled) > 1e-6) return null;
  return scaled;
}

/** `250`, `-3.5`, `99.05`: whole MDL and up to 2 decimals, as bani; null for any other text. */
export function mdlTextToBani(text: string): Minor | null {
  const m = /^(-?)(\d{1,16})(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) return null;
  const bani = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  if (!Number.isSafeInteger(bani)) return null;
  return m[1] === '-' ? -bani : bani;
}

export function baniToMdl(bani: Minor): number {
  return bani / 100;
}

/** Parsed decimals by scale, then text: the key is the catalogue's own string, never a concatenation to hash. */
const decimalMemo = new Map<number, Map<string, number>>();

/** Parse a decimal text with up to `scale` decimals into an integer scaled by 10^scale. */
export function parseDecimal(text: string, scale: number): number {
  // Catalogue tariffs and coefficients are parsed on every quote: few texts, so values are kept.
  let memo = decimalMemo.get(scale);
  if (!memo) decimalMemo.set(scale, (memo = new Map()));
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m || (m[2] && m[2].length > scale))
    throw new RangeError(`not a decimal with ≤ ${scale} places: ${text}`);
  const value = Number(m[1]) * 10 ** scale + Number((m[2] ?? '').padEnd(scale, '0') || '0');
  if (memo.size >= 4096) memo.clear();
  memo.set(text, value);
  return value;
}

/** A rate text such as "19.3033" as an integer scaled by 10^4. */
export const parseRate = (text: string): number => parseDecimal(text, 4);

/** Foreign minor units (cents) converted to bani at a 10^4-scaled rate, rounded half up. */
export function convertToBani(foreignMinor: Minor, rate: number): Minor {
  return divRoundHalfUp(foreignMinor * rate, RATE_SCALE);
}

/** Add a margin in basis points (1 bp = 0.01 %), rounded half up to the ban. */
export function withMarginBp(bani: Minor, marginBp: number): Minor {
  return divRoundHalfUp(bani * (10_000 + marginBp), 10_000);
}

/** `35.91 EUR`: minor units as an amount with two decimals and the currency. */
export function formatAmount(minor: Minor, currency: string): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;
}

/** A 10^4-scaled rate as text with four decimals: 193033 → "19.3033". */
export function formatRate(rate: number): string {
  return `${Math.floor(rate / RATE_SCALE)}.${String(rate % RATE_SCALE).padStart(4, '0')}`;
}
