import type { Services } from '../../app/services.ts';
import type { App } from '../../http/typed.ts';
import type { Render } from '../web.ts';
import { createOrderPage } from './create-order.ts';
import { detailsForm, detailsPage } from './details.ts';
import { offersPage } from './offers.ts';
import { quoteForm, quoteFormPage } from './quote-form.ts';
import { salePages } from './sale.ts';

/**
 * Sell: the sales desk (docs/decisions/0060-sales-desk-forms-from-schemas.md,
 * 0097-sales-desk-errors-and-state.md), one module and one route per step, each a page and a plain
 * form that works without JavaScript (htmx swaps the main part of the page when it runs):
 *
 * 1. `GET /sell` (quote-form.ts): the product and its get-offers form;
 * 2. `POST /sell/offers` (offers.ts): the offers, cheapest first, each with Choose;
 * 3. `POST /sell/details` (details.ts): the rest of the create-order form and the customer;
 * 4. `POST /sell/create-order` (create-order.ts): the draft, then its page;
 * 5. `GET /sell/orders/:id` (sale.ts): Pay from wallet or Record payment, then Download policy.
 *
 * The forms are checked against the partner API's own request schemas, every error at once in the
 * clerk's language, and sent to its use cases. The sale between steps is a signed token.
 */
export async function sellPages(app: App, svc: Services, render: Render): Promise<void> {
  const showQuote = quoteForm(svc, render);
  const showDetails = detailsForm(svc, render);
  quoteFormPage(app, svc, showQuote);
  offersPage(app, svc, render, showQuote);
  detailsPage(app, svc, showDetails);
  createOrderPage(app, svc, showDetails);
  salePages(app, svc, render);
}
