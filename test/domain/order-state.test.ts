import { describe, expect, it } from 'vitest';
import {
  assertTransition,
  canTransition,
  effectiveStatus,
  ORDER_STATUSES,
  TRANSITIONS,
} from '../../src/domain/order-state.ts';

describe('order state machine', () => {
  it('allows exactly the transitions of decisions 0013 and 0088 and the partner API', () => {
    const allowed = ORDER_STATUSES.flatMap((from) =>
      ORDER_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed.sort()).toEqual(
      [
        'draft→paid',
        'draft→expired',
        'paid→processing',
        'paid→completed',
        'paid→failed',
        'processing→completed',
        'processing→failed',
        'failed→refunded',
        'completed→refunded',
        // A corrected vignette:eu is issued again by its provider (decision 0088).
        'completed→processing',
      ].sort(),
    );
    expect(TRANSITIONS.refunded).toEqual([]);
    expect(TRANSITIONS.expired).toEqual([]);
    expect(() => assertTransition('completed', 'paid')).toThrow(/illegal order transition completed → paid/);
    expect(() => assertTransition('draft', 'paid')).not.toThrow();
  });

  it('reads a draft as expired from its expiry instant on, and nothing else', () => {
    const expires = Date.parse('2026-11-21T23:59:59+02:00');
    expect(effectiveStatus('draft', expires, expires - 1)).toBe('draft');
    expect(effectiveStatus('draft', expires, expires)).toBe('expired');
    expect(effectiveStatus('paid', expires, expires + 1)).toBe('paid');
    expect(effectiveStatus('completed', expires, expires + 86_400_000)).toBe('completed');
  });
});
