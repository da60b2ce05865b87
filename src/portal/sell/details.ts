import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sellModule } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import { fieldId, fieldsOf, type Values } from '../schema-form.ts';
import type { Render } from '../web.ts';
import {
  deskOf,
  summaryOf,
  flatFields,
  productName,
  saleOf,
  saleToken,
  type Errors,
  type SaleState,
} from './desk.ts';
import { prefill } from './offers-of.ts';

export interface DetailsState {
  sale: SaleState;
  values: Values;
  rows: Map<string, number>;
  customer: { name: string; phone: string; email: string };
  errors?: Errors;
  error?: string;
}

/**
 * Step 3, `POST /portal/sell/details`: the chosen offer's create-order form, what the offer and the
 * quote decided shown as chosen (in words) and only the rest asked, with the customer. The same
 * page again, with every error, when step 4 refuses it.
 */
export function detailsForm(svc: Services, render: Render) {
  return async (req: FastifyRequest, reply: FastifyReply, o: DetailsState, status = 200) => {
    const m = sellModule(o.sale.product);
    const desk = deskOf(svc, req, m.product);
    const { fixed, skip, values: decided } = prefill(desk, o.sale);
    const fields = fieldsOf(m.schemas.order, {
      values: o.values,
      rows: o.rows,
      choices: desk.choices,
      words: desk.words,
      skip,
      ...(o.errors ? { errors: o.errors } : {}),
    });
    const all = flatFields(
      fieldsOf(m.schemas.order, {
        values: decided,
        rows: new Map(),
        choices: desk.choices,
        words: desk.words,
      }),
    );
    const shown = (key: string, v: string) => {
      const f = all.find((x) => x.key === key);
      const option = f?.options?.find((x) => x.value === v);
      if (option) return option.label;
      if (f?.kind === 'date') return desk.words.f.date(v);
      return desk.words.choice(key, v);
    };
    const chosen = [...fixed].map((key) => ({
      key,
      // The error summary links here when a rule refuses what the offer chose.
      id: fieldId(key),
      label: all.find((x) => x.key === key)?.label ?? desk.words.label(key),
      value: [decided.get(key) ?? ''].flat().map((v) => shown(key, v)),
      error: o.errors?.get(key),
    }));
    const offer = o.sale.offer;
    return render(
      req,
      reply,
      'sell-order',
      {
        title: desk.t('sell.createOrder'),
        current: 'sell',
        product: m.product,
        productName: productName(desk.t, m.product),
        offerName:
          typeof offer.companyName === 'string'
            ? desk.t('sell.medicalOfferNoRegion', {
                company: offer.companyName,
                amount: String(offer.amount),
              })
            : String(offer.name ?? ''),
        offerPrice: Number(offer.price ?? offer.priceMDL),
        sale: saleToken(req, o.sale),
        fields,
        chosen,
        customer: o.customer,
        errors: o.errors,
        summary: summaryOf(o.errors),
        error: o.error,
      },
      status,
    );
  };
}

export function detailsPage(app: App, svc: Services, show: ReturnType<typeof detailsForm>): void {
  app.post(
    '/sell/details',
    { schema: { body: Type.Object({ sale: Type.String({ maxLength: 20_000 }) }) } },
    async (req, reply) => {
      const chosen = saleOf(req, req.body.sale);
      const desk = deskOf(svc, req, chosen.product);
      // The form's one-time token: the idempotency key of the order it creates (decision 0061).
      const sale = { ...chosen, once: Buffer.from(svc.randomBytes(18)).toString('base64url') };
      const { values, rows } = prefill(desk, sale);
      // Sell again: the new cover starts the day after the old one ends, whatever the offer's earliest.
      if (sale.renewal) values.set('start_date', sale.renewal.startDate);
      return show(req, reply, { sale, values, rows, customer: { name: '', phone: '', email: '' } });
    },
  );
}
