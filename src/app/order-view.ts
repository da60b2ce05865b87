import { baniToMdl } from '../domain/money.ts';
import { effectiveStatus, type OrderStatus } from '../domain/order-state.ts';
import type { OrderItemRow, OrderRow } from '../db/schema.ts';

/** The Order resource as the partner API returns it, fields in the order of docs/api-reference.md#order. */
export interface OrderView {
  id: string;
  status: OrderStatus;
  description: string;
  start_date?: string;
  end_date?: string;
  price: number;
  currency: string;
  products?: Record<string, unknown>[];
  failure_reason?: string;
  refund?: RefundView;
}

/** What a refunded order's refund was (decision 0088). */
export interface RefundView {
  amount: number;
  fee: number;
  currency: string;
  to: 'wallet' | 'customer';
  at: string;
}

export const fileUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/files/${token}.pdf`;

/**
 * `dates`: which of start_date/end_date the endpoint shows; `products` only ever on a completed
 * order, and `file` only there (a contract rule: docs/api-reference.md#order).
 */
export function orderView(
  order: OrderRow,
  items: OrderItemRow[],
  now: number,
  opts: { dates: { start: boolean; end: boolean }; publicBaseUrl: string },
): OrderView {
  const status = effectiveStatus(order.status, order.expires_at.getTime(), now);
  const view: OrderView = {
    id: order.id,
    status,
    description: order.description,
    price: baniToMdl(order.price),
    currency: order.currency,
  };
  if (opts.dates.start && order.start_date) view.start_date = order.start_date;
  if (opts.dates.end && order.end_date) view.end_date = order.end_date;
  if ((status === 'failed' || status === 'refunded') && order.failure_reason) {
    view.failure_reason = order.failure_reason;
  }
  if (status === 'completed') {
    view.products = items.map((it) => ({
      ...(it.issued ?? { product: it.product }),
      ...(it.file_token ? { file: fileUrl(opts.publicBaseUrl, it.file_token) } : {}),
    }));
  }
  return view;
}

/** get-order: dates once completed, where the product has them. */
export const GET_ORDER_DATES = (o: OrderRow, now: number) => {
  const done = effectiveStatus(o.status, o.expires_at.getTime(), now) === 'completed';
  return { start: done, end: done };
};
