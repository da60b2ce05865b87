import { sellCreateOrder, sellModule, sellRuleRefusals } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import { routes } from '../../http/schemas.ts';
import type { App } from '../../http/typed.ts';
import { fieldsOf, formValues, requestOf } from '../schema-form.ts';
import { unlessRefused, userOf } from '../web.ts';
import {
  apiRefusal,
  customerErrors,
  deskOf,
  formErrors,
  FormBody,
  one,
  refusalErrors,
  saleOf,
  withRuleErrors,
} from './desk.ts';
import type { detailsForm } from './details.ts';
import { prefill } from './offers-of.ts';
import { reshape } from './rows.ts';

const CUSTOMER = ['customer.name', 'customer.phone', 'customer.email'];

/**
 * Step 4, `POST /portal/sell/create-order`: the details and the customer sent to create-order, once
 * per form (decision 0061). Every error of the form at once beside its field; else a redirect to the
 * sale's page, so a reload creates nothing.
 */
export function createOrderPage(app: App, svc: Services, showDetails: ReturnType<typeof detailsForm>): void {
  app.post('/sell/create-order', { schema: { body: FormBody } }, async (req, reply) => {
    const body = req.body;
    const sale = saleOf(req, one(body.sale));
    if (!/^[A-Za-z0-9_-]{20,40}$/.test(sale.once)) saleOf(req, '');
    const m = sellModule(sale.product);
    const desk = deskOf(svc, req, m.product);
    const typed = formValues(body);
    const { values: decided, fixed } = prefill(desk, sale);
    // What the offer and the quote decided comes from the signed sale, never from the form.
    const values = new Map([...typed.values].filter(([k]) => !fixed.has(k)));
    for (const k of fixed) values.set(k, decided.get(k)!);
    const rows = typed.rows;
    const customer = { name: one(body['c.name']), phone: one(body['c.phone']), email: one(body['c.email']) };
    const state = { sale, values, rows, customer };
    if (reshape(body, rows, values)) return showDetails(req, reply, state);

    const item = requestOf(m.schemas.order, values, rows);
    const fields = fieldsOf(m.schemas.order, { values, rows, choices: desk.choices, words: desk.words });
    const errors = new Map([
      ...formErrors(desk, m.schemas.order, item, fields),
      ...customerErrors(desk, customer),
    ]);
    const input = {
      // Name and email may be left empty (the wire's customer holds them only when given).
      customer: {
        ...(customer.name.trim() ? { name: customer.name.trim() } : {}),
        ...(customer.email.trim() ? { email: customer.email.trim() } : {}),
        phone: customer.phone.trim(),
      },
      products: [{ product: m.product, ...item }],
    };
    if (errors.size) {
      const refusals = await sellRuleRefusals(svc, userOf(req), { order: input });
      const shown = withRuleErrors(errors, refusalErrors(desk, refusals, fields, CUSTOMER), fields, CUSTOMER);
      return showDetails(req, reply, { ...state, ...shown }, 400);
    }
    // The API's own schema last (what the form's checks missed is named in the API's words).
    const refused = apiRefusal(routes.createOrder.body, input);
    if (refused)
      return showDetails(req, reply, { ...state, ...refusalErrors(desk, [refused], fields, CUSTOMER) }, 400);
    return unlessRefused(
      async () => {
        const id = await sellCreateOrder(svc, userOf(req), sale.once, input);
        return reply.redirect(`/portal/sell/orders/${encodeURIComponent(id)}`, 303);
      },
      (r) =>
        showDetails(req, reply, { ...state, ...refusalErrors(desk, r.reasons, fields, CUSTOMER) }, r.status),
    );
  });
}
