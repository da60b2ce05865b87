import type { OrderItemRow, OrderRow, PartnerRow } from '../db/schema.ts';
import { conflict, providerRefused } from '../domain/errors.ts';
import { baniToMdl, formatAmount } from '../domain/money.ts';
import { localDate } from '../domain/time.ts';
import { orderTerms, type CancellationTerms } from '../products/cancellation.ts';
import { productModule } from '../products/registry.ts';
import { CancellationRefused } from '../providers/types.ts';
import type { AfterSaleActor } from './after-sale.ts';
import { completedOrder, confirmAfterSale, issuedTransaction, newQuote } from './after-sale.ts';
import { refundLockedOrder } from './refund-order.ts';
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

/**
 * cancel-order without a quote: what cancelling would refund, and a quote to confirm it with.
 * Changes nothing but the stored quote.
 */
export async function previewCancellation(
  svc: Services,
  partner: PartnerRow,
  id: string,
): Promise<CancelPreview> {
  const { order, items, now } = await completedOrder(svc, partner, id, 'cancel');
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
 * cancel-order with the preview's quote (`confirmAfterSale`): the provider cancels first (a
 * refusal changes nothing), then the refund and the status change, while the order is locked.
 */
export async function confirmCancellation(
  svc: Services,
  actor: AfterSaleActor,
  partner: PartnerRow,
  id: string,
  quoteId: string,
) {
  return confirmAfterSale(svc, actor, partner, id, quoteId, {
    kind: 'cancel',
    stale: STALE_CANCELLATION,
    shown: (order) => order.status === 'refunded',
    make: async (trx, { order, items }, { now, at, actor, terms: promised }) => {
      const terms = termsOf(svc, order, items, now);
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
      const words =
        to === 'wallet'
          ? `${formatAmount(terms.refund, 'MDL')} refunded to the wallet`
          : `${formatAmount(terms.refund, 'MDL')} to be refunded to the customer by the partner`;
      await refundLockedOrder(svc, trx, order, {
        reason: 'cancelled by the partner',
        actor,
        at,
        failureReason: `Cancelled by the partner: ${words}`,
        refund: { amount: terms.refund, fee: terms.fee },
      });
      return {
        before: { status: order.status },
        after: { status: 'refunded', refund: baniToMdl(terms.refund), fee: baniToMdl(terms.fee), to },
      };
    },
  });
}
