import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  baniToMdl,
  convertToBani,
  divRoundHalfUp,
  formatAmount,
  formatRate,
  mdlToBani,
  parseDecimal,
  parseRate,
  withMarginBp,
} from '../../src/domain/money.ts';

describe('money in integer bani', () => {
  it('reads wire amounts with at most two decimals, and refuses the rest', () => {
    expect(mdlToBani(19.99)).toBe(1999);
    expect(mdlToBani(0.1 + 0.2)).toBe(30);
    expect(mdlToBani(123456789.12)).toBe(12345678912);
    expect(mdlToBani(1.005)).toBeNull();
    expect(mdlToBani(Number.NaN)).toBeNull();
    expect(mdlToBani(Number.POSITIVE_INFINITY)).toBeNull();
    expect(mdlToBani(1e15)).toBeNull();
  });

  it('round-trips every two-decimal amount through bani', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), (bani) => {
        expect(mdlToBani(baniToMdl(bani))).toBe(bani);
      }),
    );
  });

  it('divides rounding half up, in integers', () => {
    expect(divRoundHalfUp(5, 2)).toBe(3);
    expect(divRoundHalfUp(4, 2)).toBe(2);
    expect(divRoundHalfUp(149, 100)).toBe(1);
    expect(divRoundHalfUp(150, 100)).toBe(2);
    expect(() => divRoundHalfUp(1.5, 2)).toThrow(RangeError);
    expect(() => divRoundHalfUp(1, 0)).toThrow(RangeError);
  });

  it('converts foreign minor units at a 10^4-scaled rate and adds margins half up', () => {
    // 35.91 EUR at 19.3033 = 693.181503 MDL → 693.18
    expect(convertToBani(3591, parseRate('19.3033'))).toBe(69318);
    // 0.5 ban rounds up
    expect(convertToBani(1, 5_000)).toBe(1);
    expect(withMarginBp(10_000, 250)).toBe(10_250);
    expect(withMarginBp(199, 250)).toBe(204); // 203.975
    expect(withMarginBp(1234, 0)).toBe(1234);
  });

  it('parses and formats decimals and rates exactly', () => {
    expect(parseDecimal('1050.00', 2)).toBe(105_000);
    expect(parseDecimal('7', 2)).toBe(700);
    expect(() => parseDecimal('1.234', 2)).toThrow(RangeError);
    expect(() => parseDecimal('-1', 2)).toThrow(RangeError);
    expect(parseRate('19.3033')).toBe(193_033);
    expect(formatRate(193_033)).toBe('19.3033');
    expect(formatRate(10_000)).toBe('1.0000');
    expect(formatAmount(69318, 'MDL')).toBe('693.18 MDL');
    expect(formatAmount(5, 'EUR')).toBe('0.05 EUR');
    expect(formatAmount(-5, 'MDL')).toBe('-0.05 MDL');
  });
});
