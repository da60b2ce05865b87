/**
 * The order state machine as data. Migration 001 mirrors TRANSITIONS in a CHECK constraint on
 * order_events, and a test proves the two agree.
 */
export const ORDER_STATUSES = [
  'draft',
  'paid',
  'processing',
  'failed',
  'completed',
  'refunded',
  'expired',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The statuses whose transitions are webhook events (decision 0015); completed is the partner API's own. */
export const WEBHOOK_EVENT_STATUSES = ['completed', 'failed', 'refunded', 'expired'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

/**
 * Every event type a partner can receive and list (decision 0091): the statuses above, `corrected`
 * (a completed order corrected by its partner) and `expiring` (its renewal notice, decision 0092).
 */
export const WEBHOOK_EVENT_TYPES = [...WEBHOOK_EVENT_STATUSES, 'corrected', 'expiring'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  draft: ['paid', 'expired'],
  paid: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  failed: ['refunded'],
  // A corrected policy whose provider re-issues it later is being issued again (decision 0088).
  completed: ['refunded', 'processing'],
  refunded: [],
  expired: [],
};

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(from: OrderStatus, to: OrderStatus): void {
  if (!canTransition(from, to)) throw new Error(`illegal order transition ${from} → ${to}`);
}

/**
 * A draft past its expiry instant reads as expired before any sweep has persisted it.
 * The instant itself (23:59:59.000 local) already counts as expired.
 */
export function effectiveStatus(status: OrderStatus, expiresAtMs: number, nowMs: number): OrderStatus {
  return status === 'draft' && nowMs >= expiresAtMs ? 'expired' : status;
}
