import { Type } from '@sinclair/typebox';
import { listPartners } from '../app/admin/directory.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent } from '../app/deliver-webhook.ts';
import { refundOrder } from '../app/refund-order.ts';
import type { Services } from '../app/services.ts';
import { badRequest } from '../domain/errors.ts';
import { ORDER_STATUSES } from '../domain/order-state.ts';
import type { App } from '../http/typed.ts';
import { PRODUCTS } from '../products/registry.ts';
import { issuedFields, withoutPolicy } from './issued.ts';
import { fromHtmx, given, noticeOf, queryOf, unlessRefused, requireRole, type Render } from './web.ts';

const Text = (max = 200) => Type.Optional(Type.String({ maxLength: max }));
const ListQuery = Type.Object({
  q: Text(),
  status: Text(20),
  product: Text(40),
  partner_id: Text(64),
  from: Text(10),
  to: Text(10),
  cursor: Text(),
});
const Id = Type.Object({ id: Type.String({ maxLength: 64 }) });
const DetailQuery = Type.Object({ refund: Text(1), done: Text(40) });
const PAGE = 25;

/** Orders: search and filters with paging; an order's whole story, with Refund and Resend webhook. */
export async function orderPages(app: App, svc: Services, render: Render): Promise<void> {
  app.get('/orders', { schema: { querystring: ListQuery } }, async (req, reply) => {
    const filters = {
      q: given(req.query.q),
      status: given(req.query.status),
      product: given(req.query.product),
      partner_id: given(req.query.partner_id),
      from: given(req.query.from),
      to: given(req.query.to),
    };
    const defined = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined));
    const cursor = given(req.query.cursor);
    // htmx shows the address of what it fetched without the empty fields.
    if (fromHtmx(req)) reply.header('hx-push-url', `/console/orders${queryOf({ ...filters, cursor })}`);
    const base = {
      title: 'Orders',
      nav: 'orders',
      filters,
      statuses: ORDER_STATUSES,
      products: PRODUCTS,
      // The partner filter offers the first partners by id; any id can still be typed in a search.
      partners: (await listPartners(svc, { limit: 200 })).partners,
      firstPage: cursor ? `/console/orders${queryOf(filters)}` : null,
    };
    return unlessRefused(
      async () => {
        const page = await listOrdersForOperator(svc, {
          ...defined,
          limit: PAGE,
          ...(cursor ? { cursor } : {}),
        });
        const next = page.next_cursor
          ? `/console/orders${queryOf({ ...filters, cursor: page.next_cursor })}`
          : null;
        return render(req, reply, 'orders', { ...base, orders: page.orders, next });
      },
      (r) => render(req, reply, 'orders', { ...base, orders: [], next: null, error: r.message }, r.status),
    );
  });

  const showOrder = async (
    req: Parameters<Render>[0],
    reply: Parameters<Render>[1],
    id: string,
    extra: Record<string, unknown> = {},
    status = 200,
  ) => {
    const order = await orderDetail(svc, id);
    const session = req.consoleSession!;
    return render(
      req,
      reply,
      'order',
      {
        title: `Order ${order.id}`,
        nav: 'orders',
        order,
        products: order.products.map((p) => ({
          ...p,
          fields: p.issued ? issuedFields(p.product, p.issued) : null,
          withoutPolicy: p.issued ? null : withoutPolicy(order.status),
        })),
        refundable: order.status === 'failed' || order.status === 'completed',
        canRefund: session.actor.role === 'admin',
        ...extra,
      },
      status,
    );
  };

  app.get('/orders/:id', { schema: { params: Id, querystring: DetailQuery } }, async (req, reply) =>
    showOrder(req, reply, req.params.id, { refundOpen: req.query.refund === '1' }),
  );

  app.post(
    '/orders/:id/refund',
    { schema: { params: Id, body: Type.Object({ _csrf: Text(), reason: Text(500) }) } },
    async (req, reply) => {
      const id = req.params.id;
      const reason = (req.body.reason ?? '').trim();
      return unlessRefused(
        async () => {
          requireRole(req, 'POST', `/admin/orders/${id}/refund`, 'refund orders');
          if (!reason)
            throw badRequest('Give a reason for the refund: the partner and the audit log see it.');
          await refundOrder(svc, id, { reason, actor: `console:${req.consoleSession!.actor.id}` });
          return reply.redirect(`/console/orders/${encodeURIComponent(id)}?done=refunded`, 303);
        },
        (r) => showOrder(req, reply, id, { error: r.message, refundOpen: true, reason }, r.status),
      );
    },
  );

  app.post('/orders/:id/resend', { schema: { params: Id } }, async (req, reply) => {
    const id = req.params.id;
    return unlessRefused(
      async () => {
        requireRole(req, 'POST', `/admin/orders/${id}/webhook`, 're-send webhooks');
        const result = await resendOrderEvent(svc, id);
        const done = result.delivered ? 'resend-delivered' : 'resend-failed';
        // htmx swaps the page's main part in place; a plain form gets the page again by GET.
        if (fromHtmx(req)) return showOrder(req, reply, id, { notice: noticeOf(done) });
        return reply.redirect(`/console/orders/${encodeURIComponent(id)}?done=${done}`, 303);
      },
      (r) => showOrder(req, reply, id, { error: r.message }, r.status),
    );
  });
}
