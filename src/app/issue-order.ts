import { isDatabaseUnavailable } from '../db/availability.ts';
import { formatAmount } from '../domain/money.ts';
import { localDateTime, formatDmy } from '../domain/time.ts';
import { completeIssuedOrder, type IssuedItem } from '../db/repos/issuance.ts';
import { findOrderWithItems, setItemIssued, transition } from '../db/repos/orders.ts';
import type { OrderRow } from '../db/schema.ts';
import type { PolicyDocument } from '../documents/policy-pdf.ts';
import { ProviderRejection } from '../providers/types.ts';
import { productModule } from '../products/registry.ts';
import { purchase } from '../products/shared.ts';
import { catalogueOf, productContext } from './product-context.ts';
import { refundLockedOrder } from './refund-order.ts';
import type { Services } from './services.ts';
import { emitOrderEvent, newEventId } from './webhook-events.ts';

/**
 * The policy PDF of an issued item, as issuance and a correction's re-issue render it: the item's
 * price and dates, the partner and customer, `SPECIMEN — sandbox` on a sandbox.
 */
export function renderPolicy(
  svc: Pick<Services, 'documents' | 'config'>,
  p: {
    document: Pick<PolicyDocument, 'title' | 'fields'>;
    order: { id: string; customer: OrderRow['customer'] };
    item: { product: string; price: number; start_date: string | null; end_date: string | null };
    partnerName: string;
    now: number;
  },
): Promise<Uint8Array> {
  return svc.documents.render({
    title: p.document.title,
    orderId: p.order.id,
    product: p.item.product,
    issuedAt: localDateTime(p.now)
      .slice(0, 16)
      .replace(/^(\d{4})-(\d{2})-(\d{2})/, '$3.$2.$1'),
    partnerName: p.partnerName,
    customer: p.order.customer,
    fields: p.document.fields,
    price: formatAmount(p.item.price, 'MDL'),
    ...(p.item.start_date ? { startDate: formatDmy(p.item.start_date) } : {}),
    ...(p.item.end_date ? { endDate: formatDmy(p.item.end_date) } : {}),
    specimen: svc.config.sandbox,
  });
}

export type IssueOutcome = 'completed' | 'processing' | 'failed' | 'skipped';

/**
 * Issues a paid order in the background: each product bought from its provider, its policy PDF
 * rendered and stored, then the order completed and its webhook event recorded in one statement.
 * Safe to run again after a crash: issued products are kept, and each step is guarded by the
 * order's status. Products issued asynchronously first pass through a visible `processing`.
 */
export async function issueOrder(
  svc: Services,
  orderId: string,
  opts: { finalAttempt: boolean },
): Promise<IssueOutcome> {
  const found = await findOrderWithItems(svc.db, orderId);
  if (!found) return 'skipped';
  const { order, items } = found;
  if (order.status !== 'paid' && order.status !== 'processing') return 'skipped';
  const modules = items.map((it) => {
    const m = productModule(it.product);
    if (!m) throw new Error(`order ${orderId} holds unknown product ${it.product}`);
    return m;
  });
  const now = await svc.clock.now();

  if (order.status === 'paid' && modules.some((m) => m.asyncIssue)) {
    await svc.db.transaction().execute(async (trx) => {
      if (
        !(await transition(trx, orderId, 'paid', 'processing', {
          actor: 'system',
          reason: 'issuance started',
          at: new Date(now),
        }))
      )
        return;
      await svc.jobs.enqueue(
        trx,
        'issue-order',
        { orderId },
        {
          startAfterSeconds: Math.ceil(svc.config.sandboxAsyncIssueMs / 1000),
          singletonKey: `issue-finish:${orderId}`,
        },
      );
    });
    return 'processing';
  }

  // The authentication cache (≤ 1 s old): issuance needs only the name and margin, and reading
  // the partner afresh cost three queries per order.
  const partner = await svc.partners.get(order.partner_id);
  if (!partner) throw new Error(`order ${orderId} has no partner ${order.partner_id}`);
  const ctx = productContext(svc, now, partner, order.customer);
  // The last item is stored by the statement that completes the order: one transaction less.
  let last: IssuedItem | undefined;
  try {
    for (const [i, item] of items.entries()) {
      if (item.issued) continue;
      const m = modules[i]!;
      // A corrected order's item is issued again by its provider, under a revision of its own.
      const receipt = order.corrected_at
        ? await svc.providers.issuer.reissue({
            product: item.product,
            orderId,
            idx: item.idx,
            revision: 1,
            ...(item.start_date ? { startDate: item.start_date } : {}),
            ...(item.end_date ? { endDate: item.end_date } : {}),
            ...m.cover(item),
          })
        : await purchase(ctx, item, orderId, m.cover(item));
      const issued = m.issue(ctx, catalogueOf(svc, m), item, receipt);
      const pdf = await renderPolicy(svc, {
        document: issued.document,
        order,
        item,
        partnerName: partner.name,
        now,
      });
      const fields = { product: item.product, ...issued.fields };
      const token = Buffer.from(svc.randomBytes(16)).toString('hex');
      if (items.slice(i + 1).every((it) => it.issued)) {
        last = { idx: item.idx, issued: JSON.stringify(fields), fileToken: token, pdf };
      } else {
        await svc.db
          .transaction()
          .execute((trx) => setItemIssued(trx, orderId, item.idx, fields, token, pdf, new Date(now)));
      }
    }
  } catch (err) {
    const rejected = err instanceof ProviderRejection;
    if (!rejected && !opts.finalAttempt) throw err; // a transient failure: the job is retried
    // The database away (a full disk, a restart) fails no order: the policy is made again once it
    // is back, however many attempts that takes (decision 0052).
    if (isDatabaseUnavailable(err)) throw err;
    svc.log.warn({ orderId, err }, 'issuance failed');
    const reason = rejected
      ? (err as Error).message
      : `issuance failed after retries: ${(err as Error).message}`;
    // For the partner: what happened, in words, never an error's internals.
    const failureReason = rejected
      ? `The provider refused to issue the policy: ${(err as Error).message}.`
      : 'The policy could not be issued: the provider did not answer after several attempts.';
    await svc.db.transaction().execute(async (trx) => {
      const failed = await transition(trx, orderId, order.status, 'failed', {
        actor: 'system',
        reason,
        at: new Date(now),
        set: { failure_reason: failureReason },
      });
      if (!failed) return;
      await emitOrderEvent(svc, trx, order, 'failed', new Date(now));
      // A wallet-paid order's money goes back in the same transaction that records the failure.
      if (order.payment_method === 'wallet') {
        await refundLockedOrder(
          svc,
          trx,
          { ...order, status: 'failed' },
          {
            reason: 'issuance failed: refunded to the wallet',
            actor: 'system',
            at: new Date(now),
            failureReason,
          },
        );
      }
    });
    return 'failed';
  }

  const { queued } = await completeIssuedOrder(svc.db, {
    orderId,
    from: order.status,
    item: last,
    eventId: newEventId(svc),
    at: new Date(await svc.clock.now()),
  });
  if (queued) svc.jobs.deliveriesQueued();
  return 'completed';
}
