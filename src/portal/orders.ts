import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  portalConfirmCancel,
  portalConfirmCorrect,
  portalPreviewCancel,
  portalPreviewCorrect,
} from '../app/portal/after-sale.ts';
import { downloadPolicy } from '../app/portal/download-policy.ts';
import { findOrders } from '../app/portal/find-orders.ts';
import { readOrder } from '../app/portal/read-order.ts';
import { orderRights, requireChangeSale, requireResend } from './areas.ts';
import { resendWebhook } from '../app/portal/resend-webhook.ts';
import type { Services } from '../app/services.ts';
import { ORDER_STATUSES } from '../domain/order-state.ts';
import type { App } from '../http/typed.ts';
import { PRODUCTS } from '../products/registry.ts';
import { DEFAULT_LANGUAGE, translator } from './i18n.ts';
import {
  fromHtmx,
  given,
  givenFields,
  Id,
  listPage,
  showById,
  Text,
  tOf,
  unlessRefused,
  userOf,
  type Render,
} from './web.ts';
import { say } from './reasons.ts';

const ListQuery = Type.Object({
  q: Text(),
  status: Text(20),
  product: Text(40),
  from: Text(10),
  to: Text(10),
  expiring: Text(10),
  cursor: Text(),
});
const PAGE = 25;

/** Orders: search and filters with paging; an order's page with its history, policies and webhooks. */
export async function orderPages(app: App, svc: Services, render: Render): Promise<void> {
  app.get('/orders', { schema: { querystring: ListQuery } }, async (req, reply) => {
    const filters = givenFields(req.query, ['q', 'status', 'product', 'from', 'to', 'expiring']);
    const { expiring, ...rest } = filters;
    return listPage(req, reply, render, {
      view: 'orders',
      say: (reason) => say(tOf(req), reason),
      filters,
      data: {
        title: tOf(req)('orders.title'),
        current: 'orders',
        filters,
        statuses: ORDER_STATUSES,
        products: PRODUCTS,
      },
      rows: 'orders',
      load: (page) =>
        findOrders(svc, userOf(req), { ...rest, expiring: expiring === 'true', limit: PAGE, ...page }),
    });
  });

  const showOrder = showById(render, 'order', async (req, id) => {
    const order = await readOrder(svc, userOf(req), id, orderRights(userOf(req)));
    return { title: tOf(req)('order.title', { id: order.id }), current: 'orders', order };
  });

  app.get(
    '/orders/:id',
    { schema: { params: Id, querystring: Type.Object({ done: Text(40) }) } },
    async (req, reply) => showOrder(req, reply, req.params.id),
  );

  app.get(
    '/orders/:id/policy/:idx',
    {
      schema: {
        params: Type.Object({
          id: Type.String({ maxLength: 64 }),
          idx: Type.String({ pattern: '^[0-9]{1,2}$' }),
        }),
      },
    },
    async (req, reply) => {
      const got = await downloadPolicy(svc, userOf(req), req.params.id, Number(req.params.idx));
      if ('cancelled' in got) {
        return render(
          req,
          reply,
          'error',
          { title: tOf(req)('order.policyCancelled'), message: tOf(req)('order.policyCancelledMessage') },
          410,
        );
      }
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${got.fileName}"`)
        .send(Buffer.from(got.pdf));
    },
  );

  // Cancel policy and Correct (decision 0088): the first press previews on the order's page, the
  // confirmation carries the preview's quote; a refusal shows on the page, above the buttons.
  const done = (reply: FastifyReply, id: string, what: string) =>
    reply.redirect(`/portal/orders/${encodeURIComponent(id)}?done=${what}`, 303);
  const onPage =
    (req: FastifyRequest, reply: FastifyReply, id: string) => (r: { message: string; status: number }) =>
      unlessRefused(
        () => showOrder(req, reply, id, { error: say(tOf(req), r.message) }, r.status),
        () =>
          render(
            req,
            reply,
            'error',
            { title: tOf(req)('error.title'), message: say(tOf(req), r.message) },
            r.status,
          ),
      );

  app.post(
    '/orders/:id/cancel',
    { schema: { params: Id, body: Type.Object({ _csrf: Text(), quote_id: Text(100) }) } },
    async (req, reply) => {
      const id = req.params.id;
      const quote = given(req.body.quote_id);
      return unlessRefused(
        async () => {
          requireChangeSale(userOf(req));
          if (quote) {
            await portalConfirmCancel(svc, userOf(req), id, quote);
            return done(reply, id, 'cancelled');
          }
          const cancelPreview = await portalPreviewCancel(svc, userOf(req), id);
          return showOrder(req, reply, id, { cancelPreview });
        },
        onPage(req, reply, id),
      );
    },
  );

  app.post(
    '/orders/:id/correct',
    {
      schema: {
        params: Id,
        body: Type.Object({
          _csrf: Text(),
          quote_id: Text(100),
          plate_number: Text(20),
          start_date: Text(10),
        }),
      },
    },
    async (req, reply) => {
      const id = req.params.id;
      const quote = given(req.body.quote_id);
      const plate = given(req.body.plate_number?.trim());
      const start = given(req.body.start_date);
      const changes = { ...(plate ? { plate_number: plate } : {}), ...(start ? { start_date: start } : {}) };
      return unlessRefused(
        async () => {
          requireChangeSale(userOf(req));
          if (!plate && !start) {
            return showOrder(
              req,
              reply,
              id,
              { error: translator(req.portalLanguage ?? DEFAULT_LANGUAGE)('order.afterSale.nothingGiven') },
              400,
            );
          }
          if (quote) {
            await portalConfirmCorrect(svc, userOf(req), id, changes, quote);
            return done(reply, id, 'corrected');
          }
          const correctPreview = await portalPreviewCorrect(svc, userOf(req), id, changes);
          return showOrder(req, reply, id, { correctPreview, changes });
        },
        onPage(req, reply, id),
      );
    },
  );

  // Back to the page the button was on: the order's, or the deliveries of Developers.
  const RETURN = new Map([['developers', '/portal/developers#deliveries']]);
  app.post(
    '/orders/:id/resend',
    { schema: { params: Id, body: Type.Object({ _csrf: Text(), return: Text(20) }) } },
    async (req, reply) => {
      const id = req.params.id;
      const back = RETURN.get(req.body.return ?? '');
      return unlessRefused(
        async () => {
          requireResend(userOf(req));
          const result = await resendWebhook(svc, userOf(req), id);
          const done = result.delivered ? 'resend-delivered' : 'resend-failed';
          if (back) return reply.redirect(back.replace('#', `?done=${done}#`), 303);
          // htmx swaps the page's main part in place; a plain form gets the page again by GET.
          if (fromHtmx(req)) return showOrder(req, reply, id, { notice: tOf(req)(`notice.${done}`) });
          return reply.redirect(`/portal/orders/${encodeURIComponent(id)}?done=${done}`, 303);
        },
        // The refusal on the order's page; on an error page when the page itself is refused.
        onPage(req, reply, id),
      );
    },
  );
}
