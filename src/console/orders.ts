import { Type } from '@sinclair/typebox';
import { listPartners } from '../app/admin/directory.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent } from '../app/deliver-webhook.ts';
import { refundOrder } from '../app/refund-order.ts';
import type { Services } from '../app/services.ts';
import { policyDocument } from '../app/operations.ts';
import { badRequest, notFound } from '../domain/errors.ts';
import { ORDER_STATUSES } from '../domain/order-state.ts';
import type { App } from '../http/typed.ts';
import { PRODUCTS } from '../products/registry.ts';
import { issuedFields, withoutPolicy } from './issued.ts';
import { act, by, givenFields, Id, listPage, showById, Text, type Render } from './web.ts';

const ListQuery = Type.Object({
  q: Text(),
  status: Text(20),
  product: Text(40),
  partner_id: Text(64),
  from: Text(10),
  to: Text(10),
  cursor: Text(),
});
const DetailQuery = Type.Object({ refund: Text(1), done: Text(40) });
const PAGE = 25;

/** Orders: search and filters with paging; an order's whole story, with Refund and Resend webhook. */
export async function orderPages(app: App, svc: Services, render: Render): Promise<void> {
  app.get('/orders', { schema: { querystring: ListQuery } }, async (req, reply) => {
    const filters = givenFields(req.query, ['q', 'status', 'product', 'partner_id', 'from', 'to']);
    return listPage(req, reply, render, {
      view: 'orders',
      filters,
      data: {
        title: 'Orders',
        nav: 'orders',
        filters,
        statuses: ORDER_STATUSES,
        products: PRODUCTS,
        // The partner filter offers the first partners by id; any id can still be typed in a search.
        partners: (await listPartners(svc, { limit: 200 })).partners,
      },
      rows: 'orders',
      load: (page) => listOrdersForOperator(svc, { ...filters, limit: PAGE, ...page }),
    });
  });

  const showOrder = showById(render, 'order', async (req, id) => {
    const order = await orderDetail(svc, id);
    return {
      title: `Order ${order.id}`,
      nav: 'orders',
      order,
      products: order.products.map((p) => ({
        ...p,
        fields: p.issued ? issuedFields(p.product, p.issued) : null,
        withoutPolicy: p.issued ? null : withoutPolicy(order.status),
      })),
      refundable: order.status === 'failed' || order.status === 'completed',
      canRefund: req.consoleSession!.actor.role === 'admin',
    };
  });

  app.get('/orders/:id', { schema: { params: Id, querystring: DetailQuery } }, async (req, reply) =>
    showOrder(req, reply, req.params.id, { refundOpen: req.query.refund === '1' }),
  );

  // A policy PDF for the operator: a refunded order's too, which its public URL answers 410 (decision 0049).
  app.get(
    '/files/:name',
    { schema: { params: Type.Object({ name: Type.String({ maxLength: 100 }) }) } },
    async (req, reply) => {
      const doc = await policyDocument(svc, req.params.name);
      if (!doc) throw notFound('There is no such policy document.');
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${req.params.name.slice(0, 8)}.pdf"`)
        .send(Buffer.from(doc.pdf));
    },
  );

  const page = (id: string) => `/console/orders/${encodeURIComponent(id)}`;

  app.post(
    '/orders/:id/refund',
    { schema: { params: Id, body: Type.Object({ _csrf: Text(), reason: Text(500) }) } },
    async (req, reply) => {
      const id = req.params.id;
      const reason = (req.body.reason ?? '').trim();
      return act(req, reply, {
        as: { write: 'POST /admin/orders/:id/refund', what: 'refund orders' },
        run: async () => {
          if (!reason)
            throw badRequest('Give a reason for the refund: the partner and the audit log see it.');
          await refundOrder(svc, by(req), id, { reason, actor: `console:${by(req).id}` });
          return 'refunded';
        },
        page: page(id),
        show: (extra, status) => showOrder(req, reply, id, extra, status),
        kept: { refundOpen: true, reason },
      });
    },
  );

  app.post('/orders/:id/resend', { schema: { params: Id } }, async (req, reply) => {
    const id = req.params.id;
    return act(req, reply, {
      as: { write: 'POST /admin/orders/:id/webhook', what: 're-send webhooks' },
      run: async () =>
        (await resendOrderEvent(svc, by(req), id)).delivered ? 'resend-delivered' : 'resend-failed',
      page: page(id),
      show: (extra, status) => showOrder(req, reply, id, extra, status),
    });
  });
}
