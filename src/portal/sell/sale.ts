import { Type } from '@sinclair/typebox';
import { readSale, sellPayOrderFromWallet, sellRecordPayment } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import { say } from '../reasons.ts';
import { Id, showById, Text, unlessRefused, userOf, type Render } from '../web.ts';
import { orderRights } from '../areas.ts';
import { deskOf } from './desk.ts';

/**
 * Step 5, `GET /portal/sell/orders/:id`: the sale's page, its price, `Pay from wallet` or
 * `Record payment`, and its policies when issued; each payment a POST of its own that redirects back.
 */
export function salePages(app: App, svc: Services, render: Render): void {
  const showSale = showById(render, 'sell-draft', async (req, id) => {
    const desk = deskOf(svc, req);
    const sale = await readSale(svc, userOf(req), id, orderRights(userOf(req)));
    return {
      title: desk.t('sell.order', { id: sale.order.id }),
      current: 'sell',
      order: sale.order,
      walletOffered: sale.walletOffered,
      payment: { receipt_id: '', transaction_id: '' },
    };
  });

  app.get(
    '/sell/orders/:id',
    { schema: { params: Id, querystring: Type.Object({ done: Text(40) }) } },
    async (req, reply) => showSale(req, reply, req.params.id),
  );

  app.post(
    '/sell/orders/:id/wallet',
    { schema: { params: Id, body: Type.Object({ _csrf: Text() }) } },
    async (req, reply) =>
      unlessRefused(
        async () => {
          await sellPayOrderFromWallet(svc, userOf(req), req.params.id);
          return reply.redirect(`/portal/sell/orders/${encodeURIComponent(req.params.id)}?done=paid`, 303);
        },
        (r) => showSale(req, reply, req.params.id, { error: say(deskOf(svc, req).t, r.message) }, r.status),
      ),
  );

  app.post(
    '/sell/orders/:id/payment',
    {
      schema: {
        params: Id,
        body: Type.Object({ _csrf: Text(), receipt_id: Text(1000), transaction_id: Text(1000) }),
      },
    },
    async (req, reply) => {
      const { t } = deskOf(svc, req);
      const payment = {
        receipt_id: (req.body.receipt_id ?? '').trim(),
        transaction_id: (req.body.transaction_id ?? '').trim(),
      };
      // Both ids, each 1 to 100 characters, as confirm-order takes them; all errors at once.
      const errors: Record<string, string> = {};
      for (const name of ['receipt_id', 'transaction_id'] as const) {
        const label = t(`field.${name}`);
        if (!payment[name]) errors[name] = t('error.required', { label });
        else if (payment[name].length > 100) errors[name] = t('error.maxLength', { label, limit: '100' });
      }
      if (Object.keys(errors).length) {
        const summary = Object.entries(errors).map(([name, message]) => ({ href: `#${name}`, message }));
        return showSale(req, reply, req.params.id, { payment, paymentErrors: errors, summary }, 400);
      }
      return unlessRefused(
        async () => {
          await sellRecordPayment(svc, userOf(req), req.params.id, payment);
          return reply.redirect(
            `/portal/sell/orders/${encodeURIComponent(req.params.id)}?done=payment-recorded`,
            303,
          );
        },
        (r) => showSale(req, reply, req.params.id, { payment, error: say(t, r.message) }, r.status),
      );
    },
  );
}
