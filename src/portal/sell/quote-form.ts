import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { renewalOf, sellModule, SELL_PRODUCTS } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import { fieldsOf, valuesOf, type Values } from '../schema-form.ts';
import { Text, userOf, type Render } from '../web.ts';
import { deskOf, summaryOf, productName, type Errors } from './desk.ts';

/** What the quote form shows again after a refusal: what was typed, and what is wrong with it. */
export interface QuoteState {
  /** Where the vehicle is registered, for a product that sells both (`md` or `abroad`). */
  registered?: string;
  values: Values;
  rows: Map<string, number>;
  errors?: Errors;
  error?: string;
  /** Sell again: the order renewed and the new cover's first day, carried to the order form. */
  renewal?: { orderId: string; startDate: string } | undefined;
}

/**
 * Step 1, `GET /portal/sell`: the product, and its get-offers form (its fields in words, in the
 * clerk's language). The same page again, with every error, when step 2 refuses it.
 */
export function quoteForm(svc: Services, render: Render) {
  return async (
    req: FastifyRequest,
    reply: FastifyReply,
    product: string | undefined,
    state: QuoteState = { values: new Map(), rows: new Map() },
    status = 200,
  ) => {
    const m = product ? sellModule(product) : undefined;
    const desk = deskOf(svc, req, m?.product);
    // A product sold for a Moldovan or a foreign vehicle asks which first, then only for that one.
    const props = m?.schemas.quote.properties ?? {};
    const either = 'vehicle' in props && 'foreign_vehicle' in props;
    const registered = either ? (state.registered === 'abroad' ? 'abroad' : 'md') : '';
    const chosen = registered === 'abroad' ? 'foreign_vehicle' : 'vehicle';
    const other = registered === 'abroad' ? 'vehicle' : 'foreign_vehicle';
    const fields = m
      ? fieldsOf(m.schemas.quote, {
          ...state,
          choices: desk.choices,
          words: desk.words,
          ...(either ? { skip: new Set([other]), require: new Set([chosen]) } : {}),
        })
      : [];
    return render(
      req,
      reply,
      'sell',
      {
        title: desk.t('sell.title'),
        current: 'sell',
        products: SELL_PRODUCTS.map((p) => ({ code: p.code, name: productName(desk.t, p.code) })),
        product: m?.product ?? '',
        productName: m ? productName(desk.t, m.product) : '',
        fields,
        registered,
        renewal: state.renewal,
        summary: summaryOf(state.errors),
        error: state.error,
      },
      status,
    );
  };
}

export function quoteFormPage(app: App, svc: Services, show: ReturnType<typeof quoteForm>): void {
  app.get(
    '/sell',
    {
      schema: {
        querystring: Type.Object({
          product: Text(40),
          registered: Text(10),
          done: Text(40),
          again: Text(64),
        }),
      },
    },
    async (req, reply) => {
      const again = req.query.again;
      if (!again) {
        return show(req, reply, req.query.product || undefined, {
          values: new Map(),
          rows: new Map(),
          ...(req.query.registered ? { registered: req.query.registered } : {}),
        });
      }
      // Sell again: the old order's request filled in, the new cover from the day after the old one.
      const r = await renewalOf(svc, userOf(req), again);
      const { values, rows } = valuesOf(r.request);
      values.delete('product');
      if (r.startDate) values.set('start_date', r.startDate);
      const renewal = r.startDate ? { orderId: again, startDate: r.startDate } : undefined;
      const registered = 'foreign_vehicle' in r.request ? 'abroad' : 'md';
      return show(req, reply, r.product, { values, rows, renewal, registered });
    },
  );
}
