import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sellModule, SELL_PRODUCTS } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import { fieldsOf, type Values } from '../schema-form.ts';
import { Text, type Render } from '../web.ts';
import { deskOf, summaryOf, productName, type Errors } from './desk.ts';

/** What the quote form shows again after a refusal: what was typed, and what is wrong with it. */
export interface QuoteState {
  values: Values;
  rows: Map<string, number>;
  errors?: Errors;
  error?: string;
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
    const fields = m ? fieldsOf(m.schemas.quote, { ...state, choices: desk.choices, words: desk.words }) : [];
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
        summary: summaryOf(state.errors),
        error: state.error,
      },
      status,
    );
  };
}

export function quoteFormPage(app: App, show: ReturnType<typeof quoteForm>): void {
  app.get(
    '/sell',
    { schema: { querystring: Type.Object({ product: Text(40), done: Text(40) }) } },
    async (req, reply) => show(req, reply, req.query.product || undefined),
  );
}
