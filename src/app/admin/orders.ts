import { badRequest, notFound } from '../../domain/errors.ts';
import { baniToMdl } from '../../domain/money.ts';
import { ORDER_STATUSES, effectiveStatus, type OrderStatus } from '../../domain/order-state.ts';
import { addDays, isoLocal, isValidDate, localInstant } from '../../domain/time.ts';
import { PRODUCTS } from '../../products/registry.ts';
import { findOrder, listOrders, orderEvents, orderItems } from '../../db/repos/orders.ts';
import { attemptsFor, eventsFor } from '../../db/repos/webhooks.ts';
import { orderLedger } from '../../db/repos/wallets.ts';
import type { OrderRow } from '../../db/schema.ts';
import { refundView } from '../refund-order.ts';
import { fileUrl } from '../order-view.ts';
import type { Services } from '../services.ts';

/** Operator views of orders: everything about one order, and cursor-paged lists. */
function summary(o: OrderRow, now: number) {
  return {
    id: o.id,
    partner_id: o.partner_id,
    status: effectiveStatus(o.status, o.expires_at.getTime(), now),
    stored_status: o.status,
    description: o.description,
    price: baniToMdl(o.price),
    currency: o.currency,
    payment_method: o.payment_method,
    created_at: isoLocal(o.created_at.getTime()),
    expires_at: isoLocal(o.expires_at.getTime()),
  };
}

const encodeCursor = (o: OrderRow) =>
  Buffer.from(`${o.created_at.toISOString()}|${o.id}`).toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(iso ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw badRequest('cursor is not valid');
  return { createdAt, id };
}

/**
 * Orders newest first, cursor-paged, filtered by partner, status, product and local creation days
 * (`from`..`to`, yyyy-mm-dd, Europe/Chisinau), and searched with `q`: an order id, a partner id, a
 * plate or vehicle certificate, or the customer's phone.
 */
export async function listOrdersForOperator(
  svc: Services,
  q: {
    partner_id?: string;
    status?: string;
    product?: string;
    from?: string;
    to?: string;
    q?: string;
    limit?: number;
    cursor?: string;
    ending?: { from: string; to: string; minDays: number };
  },
) {
  if (q.status && !(ORDER_STATUSES as readonly string[]).includes(q.status)) {
    throw badRequest(`status must be one of ${ORDER_STATUSES.join(', ')}`);
  }
  if (q.product && !(PRODUCTS as readonly string[]).includes(q.product)) {
    throw badRequest(`product must be one of ${PRODUCTS.join(', ')}`);
  }
  for (const day of [q.from, q.to]) {
    if (day !== undefined && !isValidDate(day)) throw badRequest('from and to must be dates yyyy-mm-dd');
  }
  const limit = q.limit ?? 50;
  const rows = await listOrders(svc.db, {
    limit: limit + 1,
    ...(q.partner_id ? { partnerId: q.partner_id } : {}),
    ...(q.status ? { status: q.status as OrderStatus } : {}),
    ...(q.product ? { product: q.product } : {}),
    ...(q.from ? { from: new Date(localInstant(q.from, '00:00:00')) } : {}),
    ...(q.to ? { to: new Date(localInstant(addDays(q.to, 1), '00:00:00')) } : {}),
    ...(q.q?.trim() ? { q: q.q } : {}),
    ...(q.ending ? { ending: q.ending } : {}),
    ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
  });
  const page = rows.slice(0, limit);
  const now = await svc.clock.now();
  return {
    orders: page.map((o) => summary(o, now)),
    next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null,
  };
}

export async function orderDetail(svc: Services, id: string) {
  const o = await findOrder(svc.db, id);
  if (!o) throw notFound('Order not found');
  const now = await svc.clock.now();
  const [items, events, webhookEvents, attempts, ledger, refund] = await Promise.all([
    orderItems(svc.db, id),
    orderEvents(svc.db, id),
    eventsFor(svc.db, id),
    attemptsFor(svc.db, id),
    orderLedger(svc.db, id),
    refundView(svc, id),
  ]);
  return {
    ...summary(o, now),
    customer: o.customer,
    start_date: o.start_date,
    end_date: o.end_date,
    payment:
      o.payment && (({ amount_bani, ...rest }) => ({ ...rest, amount: baniToMdl(amount_bani) }))(o.payment),
    paid_at: o.paid_at ? isoLocal(o.paid_at.getTime()) : null,
    completed_at: o.completed_at ? isoLocal(o.completed_at.getTime()) : null,
    corrected_at: o.corrected_at ? isoLocal(o.corrected_at.getTime()) : null,
    corrected_by: o.corrected_by,
    failure_reason: o.failure_reason,
    products: items.map((it) => ({
      idx: it.idx,
      product: it.product,
      price: baniToMdl(it.price),
      description: it.description,
      start_date: it.start_date,
      end_date: it.end_date,
      issued: it.issued,
      file: it.file_token ? fileUrl(svc.config.publicBaseUrl, it.file_token) : null,
    })),
    history: events.map(({ at, ...e }) => ({ ...e, at: isoLocal(at.getTime()) })),
    webhook_events: webhookEvents.map(({ created_at, next_attempt_at: next, settled_at: settled, ...e }) => ({
      ...e,
      created_at: isoLocal(created_at.getTime()),
      next_attempt_at: next && isoLocal(next.getTime()),
      settled_at: settled && isoLocal(settled.getTime()),
    })),
    webhook_attempts: attempts.map((a) => ({
      event_id: a.event_id,
      event: a.event_status,
      attempt: a.attempt,
      trigger: a.trigger,
      url: a.url,
      at: isoLocal(a.attempted_at.getTime()),
      http_status: a.http_status,
      error: a.error,
      latency_ms: a.latency_ms,
    })),
    ledger: ledger.map((l) => ({
      wallet: l.wallet,
      amount: baniToMdl(l.amount),
      balance_after: baniToMdl(l.balance_after),
      kind: l.kind,
      reference: l.reference,
      actor: l.actor,
      at: isoLocal(l.created_at.getTime()),
    })),
    refund,
  };
}
