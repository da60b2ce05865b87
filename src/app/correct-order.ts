import { markCorrected, replaceItem, transition } from '../db/repos/orders.ts';
import type { OrderItemRow, OrderRow, PartnerRow } from '../db/schema.ts';
import { badRequest, conflict, DomainError, providerRefused } from '../domain/errors.ts';
import { isValidDate, localDate } from '../domain/time.ts';
import { productModule } from '../products/registry.ts';
import type { Correction, PricedItem, ProductModule } from '../products/types.ts';
import { ProviderRejection } from '../providers/types.ts';
import type { AfterSaleActor } from './after-sale.ts';
import { completedOrder, confirmAfterSale, issuedTransaction, newQuote } from './after-sale.ts';
import { renderPolicy } from './issue-order.ts';
import { emitOrderEvent } from './webhook-events.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

/** What a corrected item's row becomes, before any new document. */
const replacement = (
  next: Pick<OrderItemRow, 'order_id' | 'idx' | 'description' | 'start_date' | 'end_date'> & {
    details: unknown;
  },
  at: Date,
) => ({
  orderId: next.order_id,
  idx: next.idx,
  description: next.description,
  startDate: next.start_date,
  endDate: next.end_date,
  details: next.details,
  at,
});

export const STALE_CORRECTION = 'Correction quote expired: preview again';

/** After issuance, a correction is still allowed this long, whatever the first day (decision 0088). */
export const CORRECTION_GRACE_MS = 15 * 60 * 1000;

const FIELDS: readonly string[] = ['plate_number', 'start_date'];

/** A plate as every vignette's request schema takes it (correct-order's schema says the same). */
export const PLATE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9 -]{0,13}[A-Za-z0-9]$';

export type CorrectPreview =
  | { id: string; correctable: true; quote_id: string; valid_until: string }
  | { id: string; correctable: false; reason: string };

/** An item priced again with the corrections in its request. */
interface Corrected {
  item: OrderItemRow;
  module: ProductModule;
  priced: PricedItem;
}

/**
 * A field outside the correctable ones is refused by name, before anything is read: the partner
 * learns what it may send, whatever the order.
 */
function requireCorrectableFields(changes: Correction): void {
  const other = Object.keys(changes).filter((k) => !FIELDS.includes(k));
  if (other.length) {
    throw badRequest(
      `changes.${other[0]} cannot be corrected: only ${FIELDS.map((f) => `changes.${f}`).join(' and ')} can`,
    );
  }
  // The portal's form reaches here without the API's schema.
  if (changes.plate_number !== undefined && !new RegExp(PLATE_PATTERN).test(changes.plate_number))
    throw badRequest('changes.plate_number must be 2 to 15 letters, digits, spaces or hyphens');
  if (changes.start_date !== undefined && !isValidDate(changes.start_date))
    throw badRequest('changes.start_date must be a date, yyyy-mm-dd');
}

/**
 * Whether the order may take these corrections now, and each item priced again with them; a
 * reason otherwise. The rules: only vignettes, once per order, before the first day of validity or
 * within 15 minutes of issuance, the price unchanged, something actually changed.
 */
async function assess(
  svc: Services,
  partner: PartnerRow,
  order: OrderRow,
  items: OrderItemRow[],
  changes: Correction,
  now: number,
): Promise<{ ok: true; corrected: Corrected[] } | { ok: false; reason: string }> {
  if (order.corrected_at) return { ok: false, reason: 'The order has already been corrected once' };
  const today = localDate(now);
  const fresh = order.completed_at !== null && now - order.completed_at.getTime() <= CORRECTION_GRACE_MS;
  const ctx = { ...productContext(svc, now, partner, order.customer), correcting: order.id };
  const corrected: Corrected[] = [];
  for (const item of items) {
    const m = productModule(item.product);
    if (!m?.correct) return { ok: false, reason: `A ${item.product} policy cannot be corrected` };
    if (!fresh && item.start_date !== null && today >= item.start_date) {
      return {
        ok: false,
        reason: `The policy is valid since ${item.start_date}: it can be corrected only before its first day or within 15 minutes of issuance`,
      };
    }
    const correction = m.correct(item, changes);
    if ('refused' in correction) return { ok: false, reason: correction.refused };
    let priced: PricedItem;
    try {
      priced = await m.price(ctx, catalogueOf(svc, m), correction.request);
    } catch (err) {
      if (err instanceof DomainError && (err.code === 'product_rule' || err.code === 'vehicle_not_found'))
        return { ok: false, reason: err.reason };
      throw err;
    }
    if (priced.price !== item.price) {
      return { ok: false, reason: 'The price would change: cancel the order and sell it again' };
    }
    corrected.push({ item, module: m, priced });
  }
  const same = corrected.every(
    ({ item, priced }) =>
      JSON.stringify(priced.details) === JSON.stringify(item.details) &&
      (priced.startDate ?? null) === item.start_date,
  );
  if (same) return { ok: false, reason: 'Nothing would change: the order already has these values' };
  return { ok: true, corrected };
}

/** correct-order without a quote: whether the corrections may be made, and a quote to make them with. */
export async function previewCorrection(
  svc: Services,
  partner: PartnerRow,
  id: string,
  changes: Correction,
): Promise<CorrectPreview> {
  requireCorrectableFields(changes);
  const { order, items, now } = await completedOrder(svc, partner, id, 'correct');
  const a = await assess(svc, partner, order, items, changes, now);
  if (!a.ok) return { id, correctable: false, reason: a.reason };
  const quote = await newQuote(svc, order, 'correct', { changes: { ...changes } }, now);
  return { id, correctable: true, ...quote };
}

const sameChanges = (a: unknown, b: Correction) =>
  typeof a === 'object' &&
  a !== null &&
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * correct-order with the preview's quote (`confirmAfterSale`): the provider re-issues each product
 * with the corrected fields, and the items, their new documents (the old ones then answer 410) and
 * the order's mark of correction are written while the order is locked.
 */
export async function confirmCorrection(
  svc: Services,
  actor: AfterSaleActor,
  partner: PartnerRow,
  id: string,
  changes: Correction,
  quoteId: string,
) {
  requireCorrectableFields(changes);
  return confirmAfterSale(svc, actor, partner, id, quoteId, {
    kind: 'correct',
    stale: STALE_CORRECTION,
    sameRequest: (terms) => sameChanges(terms.changes, changes),
    shown: (order) => order.corrected_at !== null,
    make: async (trx, { order, items }, { now, at, actor }) => {
      const a = await assess(svc, partner, order, items, changes, now);
      if (!a.ok) throw conflict(STALE_CORRECTION);
      const ctx = productContext(svc, now, partner, order.customer);
      let later = false;
      for (const { item, module: m, priced } of a.corrected) {
        const next = {
          ...item,
          description: priced.description,
          start_date: priced.startDate ?? null,
          end_date: priced.endDate ?? null,
          details: priced.details,
        };
        if (m.asyncIssue) {
          // Its provider answers later: issuance re-issues it, the order `processing` meanwhile.
          await replaceItem(trx, replacement(next, at));
          later = true;
          continue;
        }
        const transactionId = issuedTransaction(item);
        let receipt;
        try {
          receipt = await svc.providers.issuer.reissue({
            product: item.product,
            orderId: id,
            idx: item.idx,
            revision: 1,
            ...(transactionId ? { transactionId } : {}),
            ...(next.start_date ? { startDate: next.start_date } : {}),
            ...(next.end_date ? { endDate: next.end_date } : {}),
            ...m.cover(next),
          });
        } catch (err) {
          if (err instanceof ProviderRejection) {
            throw providerRefused(`The provider refused the correction: ${err.message}`);
          }
          throw err;
        }
        const issued = m.issue(ctx, catalogueOf(svc, m), next, receipt);
        const pdf = await renderPolicy(svc, {
          document: issued.document,
          order,
          item: { ...next, price: item.price },
          partnerName: partner.name,
          now,
        });
        await replaceItem(trx, {
          ...replacement(next, at),
          document: {
            issued: { product: item.product, ...issued.fields },
            fileToken: Buffer.from(svc.randomBytes(16)).toString('hex'),
            pdf,
          },
        });
      }
      const starts = a.corrected
        .map((c) => c.priced.startDate)
        .filter((d): d is string => !!d)
        .sort();
      const ends = a.corrected
        .map((c) => c.priced.endDate)
        .filter((d): d is string => !!d)
        .sort();
      if (
        !(await markCorrected(trx, {
          orderId: id,
          startDate: starts[0] ?? order.start_date,
          endDate: ends.at(-1) ?? order.end_date,
          actor,
          at,
        }))
      )
        throw new Error(`order ${id} changed under its row lock`);
      if (later) {
        if (
          !(await transition(trx, id, 'completed', 'processing', {
            actor,
            reason: 'corrected: issued again',
            at,
          }))
        )
          throw new Error(`order ${id} changed under its row lock`);
        await svc.jobs.enqueue(
          trx,
          'issue-order',
          { orderId: id },
          {
            startAfterSeconds: Math.ceil(svc.config.sandboxAsyncIssueMs / 1000),
            singletonKey: `issue-correction:${id}`,
          },
        );
      }
      // The `corrected` event when the correction is made (a vignette:eu's new file follows later).
      await emitOrderEvent(svc, trx, order, 'corrected', at);
      return {
        before: Object.fromEntries(
          Object.keys(changes).map((k) => [k, k === 'start_date' ? order.start_date : plateOf(items)]),
        ),
        after: { ...changes },
      };
    },
  });
}

/** The plate the order's first product was issued for, for the audit log's before. */
function plateOf(items: OrderItemRow[]): string | null {
  for (const it of items) {
    const p = it.issued?.plate_number ?? it.issued?.registration_number;
    if (typeof p === 'string') return p;
  }
  return null;
}
