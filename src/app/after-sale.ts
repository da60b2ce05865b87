import {
  insertQuote,
  lockQuote,
  markQuoteUsed,
  type AfterSaleQuoteRow,
} from '../db/repos/after-sale-quotes.ts';
import { lockOrderWithItems } from '../db/repos/orders.ts';
import type { OrderItemRow, OrderRow, PartnerRow } from '../db/schema.ts';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { badRequest, conflict, orderNotFound } from '../domain/errors.ts';
import { effectiveStatus } from '../domain/order-state.ts';
import { isoLocal } from '../domain/time.ts';
import { audit, type PartnerActor, type PortalActor } from './actor.ts';
import { getOrder, partnerOrder } from './get-order.ts';
import type { Services } from './services.ts';

/** A preview's confirmation window (decision 0088), on the service clock. */
export const QUOTE_TTL_MS = 10 * 60 * 1000;

/**
 * Who makes an after-sale change: the partner through its API, or one of its portal users. The
 * actor's id goes in the order's history, the refund and the audit log.
 */
export type AfterSaleActor = PartnerActor | PortalActor;

type Kind = AfterSaleQuoteRow['kind'];

/** What each kind of change makes of the order, in the refusals' words. */
const DONE: Record<Kind, string> = { cancel: 'cancelled', correct: 'corrected' };

/**
 * The state rule both endpoints share: only a completed order is changed after the sale. A draft
 * expires by itself; an order being issued is not yet anything to change; the others are over.
 */
function requireCompleted(order: OrderRow, now: number, kind: Kind): void {
  const what = DONE[kind];
  const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
  if (status === 'completed') return;
  if (status === 'draft') throw badRequest(`Only a completed order can be ${what}`);
  if (status === 'paid' || status === 'processing') throw conflict('Issuance in progress');
  throw badRequest(`Order is ${status}: only a completed order can be ${what}`);
}

/**
 * The order a preview speaks of: the partner's own, completed, and the service clock's now that
 * the preview and its quote are made at.
 */
export async function completedOrder(svc: Services, partner: PartnerRow, id: string, kind: Kind) {
  const { order, items } = await partnerOrder(svc, partner, id);
  const now = await svc.clock.now();
  requireCompleted(order, now, kind);
  return { order, items, now };
}

/** One kind of after-sale change, as its confirmation makes it (`confirmAfterSale`). */
export interface AfterSaleChange {
  kind: Kind;
  /** The conflict's message when the quote no longer holds: preview again. */
  stale: string;
  /** Whether the quote was made for what this confirmation sends; absent, any quote of the kind is. */
  sameRequest?: (terms: AfterSaleQuoteRow['terms']) => boolean;
  /** Whether the order already shows this change: a used quote confirmed again answers it as it is. */
  shown: (order: OrderRow) => boolean;
  /**
   * The change itself, under the order's lock, held to the quote's terms (a stale quote throws
   * `stale`); answers the audit entry's before and after.
   */
  make: (
    trx: Transaction<DB>,
    locked: { order: OrderRow; items: OrderItemRow[] },
    made: { now: number; at: Date; actor: string; terms: AfterSaleQuoteRow['terms'] },
  ) => Promise<{ before: unknown; after: unknown }>;
}

/**
 * A preview's confirmation, either endpoint's (decision 0088): in one transaction under the order's
 * lock, so of concurrent cancellations, corrections and operator refunds exactly one changes the
 * order, the quote is held to its preview, the change made, the quote used up and the change
 * audited. The same quote confirmed again answers the order as it is.
 */
export async function confirmAfterSale(
  svc: Services,
  actor: AfterSaleActor,
  partner: PartnerRow,
  id: string,
  quoteId: string,
  change: AfterSaleChange,
) {
  await partnerOrder(svc, partner, id);
  await svc.db.transaction().execute(async (trx) => {
    const locked = await lockOrderWithItems(trx, id);
    if (!locked) throw orderNotFound();
    const { order } = locked;
    const now = await svc.clock.now();
    const held = await heldQuote(trx, quoteId, order, change.kind, now);
    const holds = held !== undefined && (change.sameRequest?.(held.quote.terms) ?? true);
    if (holds && held.used && change.shown(order)) return;
    if (!holds || held.used) throw conflict(change.stale);
    requireCompleted(order, now, change.kind);
    const at = new Date(now);
    const audited = await change.make(trx, locked, { now, at, actor: actor.id, terms: held.quote.terms });
    await markQuoteUsed(trx, quoteId, at);
    await audit(trx, actor, { action: `order.${change.kind}`, target: id, ...audited, at });
  });
  return getOrder(svc, partner, id);
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
