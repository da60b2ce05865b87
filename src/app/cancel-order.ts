import { markQuoteUsed } from '../db/repos/after-sale-quotes.ts';
import { findOrderWithItems, lockOrderWithItems } from '../db/repos/orders.ts';
import type { OrderItemRow, OrderRow, PartnerRow } from '../db/schema.ts';
import { conflict, orderNotFound, providerRefused } from '../domain/errors.ts';
import { baniToMdl, formatAmount } from '../domain/money.ts';
import { localDate } from '../domain/time.ts';
import { orderTerms, type CancellationTerms } from '../products/cancellation.ts';
import { productModule } from '../products/registry.ts';
import { CancellationRefused } from '../providers/types.ts';
import { heldQuote, issuedTransaction, newQuote, requireCompleted } from './after-sale.ts';
import { getOrder } from './get-order.ts';
import { refundLockedOrder } from './refund-order.ts';
import { audit, type PartnerActor, type PortalActor } from './actor.ts';
import type { Services } from './services.ts';

export const STALE_CANCELLATION = 'Cancellation quote expired: preview again';

export type CancelPreview =
  | {
      id: string;
      cancellable: true;
      refund: { amount: number; fee: number; currency: 'MDL'; to: 'wallet' | 'customer' };
      quote_id: string;
      valid_until: string;
    }
  | { id: string; cancellable: false; reason: string };

/** What the order's products may be cancelled for today, by the catalogue's rules (decision 0087). */
function termsOf(svc: Services, order: OrderRow, items: OrderItemRow[], now: number): CancellationTerms {
  const issuedOn = localDate((order.completed_at ?? order.paid_at ?? order.created_at).getTime());
  return orderTerms(
    svc.catalogue.cancellation,
    items.map((it) => ({
      product: it.product,
      price: it.price,
      startDate: it.start_date,
      endDate: it.end_date,
    })),
    localDate(now),
    issuedOn,
  );
}

const refundTo = (order: OrderRow) => (order.payment_method === 'wallet' ? 'wallet' : 'customer');

async function ownOrder(svc: Services, partner: PartnerRow, id: string) {
  const found = await findOrderWithItems(svc.db, id);
  if (!found || found.order.partner_id !== partner.id) throw orderNotFound();
  return found;
}

/**
 * cancel-order without a quote: what cancelling would refund, and a quote to confirm it with.
 * Changes nothing but the stored quote.
 */
export async function previewCancellation(
  svc: Services,
  partner: PartnerRow,
  id: string,
): Promise<CancelPreview> {
  const { order, items } = await ownOrder(svc, partner, id);
  const now = await svc.clock.now();
  requireCompleted(order, now, 'cancelled');
  const terms = termsOf(svc, order, items, now);
  if (!terms.cancellable) return { id, cancellable: false, reason: terms.reason };
  const to = refundTo(order);
  const quote = await newQuote(svc, order, 'cancel', { amount: terms.refund, fee: terms.fee, to }, now);
  return {
    id,
    cancellable: true,
    refund: { amount: baniToMdl(terms.refund), fee: baniToMdl(terms.fee), currency: 'MDL', to },
    ...quote,
  };
}

/**
 * cancel-order with the preview's quote: the provider cancels first (a refusal changes nothing),
 * then the refund and the status change in one transaction, under the order's lock, so of
 * concurrent cancellations, corrections and operator refunds exactly one changes the order. The
 * same quote confirmed again answers the order as it is.
 */
export async function confirmCancellation(
  svc: Services,
  actor: PartnerActor | PortalActor,
  partner: PartnerRow,
  id: string,
  quoteId: string,
) {
  await ownOrder(svc, partner, id);
  await svc.db.transaction().execute(async (trx) => {
    const locked = await lockOrderWithItems(trx, id);
    if (!locked) throw orderNotFound();
    const { order, items } = locked;
    const now = await svc.clock.now();
    const held = await heldQuote(trx, quoteId, order, 'cancel', now);
    if (held?.used && order.status === 'refunded') return;
    if (!held || held.used) throw conflict(STALE_CANCELLATION);
    requireCompleted(order, now, 'cancelled');
    const terms = termsOf(svc, order, items, now);
    const promised = held.quote.terms;
    const to = refundTo(order);
    if (
      !terms.cancellable ||
      terms.refund !== promised.amount ||
      terms.fee !== promised.fee ||
      to !== promised.to
    ) {
      throw conflict(STALE_CANCELLATION);
    }
    // The provider first, while the order is locked: a refusal rolls everything back, and no
    // competing change can slip in between its answer and the refund.
    for (const item of items) {
      const m = productModule(item.product);
      if (!m) throw new Error(`order ${id} holds unknown product ${item.product}`);
      const transactionId = issuedTransaction(item);
      try {
        await svc.providers.issuer.cancel({
          product: item.product,
          orderId: id,
          idx: item.idx,
          ...(transactionId ? { transactionId } : {}),
          ...m.cover(item),
        });
      } catch (err) {
        if (err instanceof CancellationRefused) {
          throw providerRefused(`The insurer refused the cancellation: ${err.message}`);
        }
        throw err;
      }
    }
    const at = new Date(now);
    const words =
      to === 'wallet'
        ? `${formatAmount(terms.refund, 'MDL')} refunded to the wallet`
        : `${formatAmount(terms.refund, 'MDL')} to be refunded to the customer by the partner`;
    await refundLockedOrder(svc, trx, order, {
      reason: 'cancelled by the partner',
      actor: actor.id,
      at,
      failureReason: `Cancelled by the partner: ${words}`,
      refund: { amount: terms.refund, fee: terms.fee },
    });
    await markQuoteUsed(trx, quoteId, at);
    await audit(trx, actor, {
      action: 'order.cancel',
      target: id,
      before: { status: order.status },
      after: { status: 'refunded', refund: baniToMdl(terms.refund), fee: baniToMdl(terms.fee), to },
      at,
    });
  });
  return getOrder(svc, partner, id);
}
