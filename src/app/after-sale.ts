import { insertQuote, lockQuote, type AfterSaleQuoteRow } from '../db/repos/after-sale-quotes.ts';
import type { OrderItemRow, OrderRow } from '../db/schema.ts';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { badRequest, conflict } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { isoLocal } from '../domain/time.ts';
import type { Services } from './services.ts';

/** A preview's confirmation window (decision 0088), on the service clock. */
export const QUOTE_TTL_MS = 10 * 60 * 1000;

/**
 * The state rule both endpoints share: only a completed order is changed after the sale. A draft
 * expires by itself; an order being issued is not yet anything to change; the others are over.
 */
export function requireCompleted(order: OrderRow, now: number, what: 'cancelled' | 'corrected'): void {
  const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
  if (status === 'completed') return;
  if (status === 'draft') throw badRequest(`Only a completed order can be ${what}`);
  if (status === 'paid' || status === 'processing') throw conflict('Issuance in progress');
  throw badRequest(`Order is ${status}: only a completed order can be ${what}`);
}

/** A new preview, stored so that its confirmation can be held to it. */
export async function newQuote(
  svc: Services,
  order: OrderRow,
  kind: AfterSaleQuoteRow['kind'],
  terms: Record<string, unknown>,
  now: number,
): Promise<{ quote_id: string; valid_until: string }> {
  const id = `${kind === 'cancel' ? 'cq' : 'xq'}_${Buffer.from(svc.randomBytes(16)).toString('hex')}`;
  const validUntil = now + QUOTE_TTL_MS;
  await insertQuote(svc.db, {
    id,
    order_id: order.id,
    partner_id: order.partner_id,
    kind,
    terms,
    order_updated_at: order.updated_at,
    created_at: new Date(now),
    valid_until: new Date(validUntil),
  });
  return { quote_id: id, valid_until: isoLocal(validUntil) };
}

/**
 * The quote a confirmation names, locked, if it still holds: this partner's, of this order and
 * kind, unused, within its 10 minutes, and the order unchanged since (its updated_at). Otherwise
 * `undefined`; `used` when this very quote already changed this order (a repeated confirmation).
 */
export async function heldQuote(
  trx: Transaction<DB>,
  quoteId: string,
  order: OrderRow,
  kind: AfterSaleQuoteRow['kind'],
  now: number,
): Promise<{ quote: AfterSaleQuoteRow; used: boolean } | undefined> {
  const quote = await lockQuote(trx, quoteId);
  if (!quote || quote.order_id !== order.id || quote.partner_id !== order.partner_id || quote.kind !== kind)
    return undefined;
  if (quote.used_at) return { quote, used: true };
  if (quote.valid_until.getTime() <= now) return undefined;
  if (quote.order_updated_at.getTime() !== order.updated_at.getTime()) return undefined;
  return { quote, used: false };
}

/** A product's plate and transaction for the provider, from its issued fields. */
export const issuedTransaction = (item: OrderItemRow): string | undefined => {
  const t = item.issued?.transaction_id;
  return typeof t === 'string' ? t : undefined;
};
