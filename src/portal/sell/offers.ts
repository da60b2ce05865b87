import { sellModule, sellQuote, sellRuleRefusals } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import { fieldsOf, formValues, requestOf } from '../schema-form.ts';
import { unlessRefused, userOf, type Render } from '../web.ts';
import {
  deskOf,
  formErrors,
  FormBody,
  one,
  productName,
  refusalErrors,
  renewalIn,
  saleToken,
  withRuleErrors,
} from './desk.ts';
import { offersOf } from './offers-of.ts';
import type { quoteForm } from './quote-form.ts';
import { reshape } from './rows.ts';

/**
 * Step 2, `POST /portal/sell/offers`: the get-offers form sent to the partner API's use case, every
 * error of the form at once beside its field, or the offers, cheapest first, each with `Choose`
 * (a signed token of the sale so far: decision 0097). Nothing changes here.
 */
export function offersPage(
  app: App,
  svc: Services,
  render: Render,
  showQuote: ReturnType<typeof quoteForm>,
): void {
  app.post('/sell/offers', { schema: { body: FormBody } }, async (req, reply) => {
    const body = req.body;
    const product = one(body.product);
    const m = sellModule(product);
    const desk = deskOf(svc, req, m.product);
    const { values, rows } = formValues(body);
    const registered = one(body.registered);
    const renewal = renewalIn(body);
    if (reshape(body, rows, values))
      return showQuote(req, reply, product, { registered, renewal, values, rows });
    const item = requestOf(m.schemas.quote, values, rows);
    const request = { product: m.product, ...item };
    const fields = fieldsOf(m.schemas.quote, { values, rows, choices: desk.choices, words: desk.words });
    const errors = formErrors(desk, m.schemas.quote, item, fields);
    if (errors.size) {
      const rules = refusalErrors(desk, await sellRuleRefusals(svc, userOf(req), { quote: request }), fields);
      const shown = withRuleErrors(errors, rules, fields);
      return showQuote(req, reply, product, { registered, renewal, values, rows, ...shown }, 400);
    }
    return unlessRefused(
      async () => {
        const offers = offersOf(desk, await sellQuote(svc, userOf(req), request));
        return render(req, reply, 'sell-offers', {
          title: desk.t('sell.offers'),
          current: 'sell',
          product: m.product,
          productName: productName(desk.t, m.product),
          offers: offers.map((o) => ({
            ...o,
            sale: saleToken(req, {
              product: m.product,
              quote: request,
              offer: o.chosen,
              once: '',
              ...(renewal ? { renewal } : {}),
            }),
          })),
        });
      },
      (r) =>
        showQuote(
          req,
          reply,
          product,
          { registered, renewal, values, rows, ...refusalErrors(desk, r.reasons, fields) },
          r.status,
        ),
    );
  });
}
