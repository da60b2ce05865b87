import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import {
  openDesk,
  productChoices,
  readSale,
  renewalOf,
  sellCreateOrder,
  sellModule,
  SELL_PRODUCTS,
  sellPayFromWallet,
  sellQuote,
  sellRecordPayment,
} from '../app/portal/sell.ts';
import type { Services } from '../app/services.ts';
import { COUNTRY_CHOICES } from '../products/countries.ts';
import { schemaErrorMessage } from '../http/schema-errors.ts';
import { routes } from '../http/schemas.ts';
import type { App } from '../http/typed.ts';
import {
  fieldOfReason,
  fieldsOf,
  formValues,
  keysOf,
  requestOf,
  valuesOf,
  type Choices,
  type Field,
  type Values,
} from './schema-form.ts';
import { Id, refusal, showById, Text, unlessRefused, userOf, type Render } from './web.ts';

/**
 * Sell: the sales desk (docs/decisions/0060-sales-desk-forms-from-schemas.md). Each step is a page
 * and a plain form, so it works without JavaScript; htmx swaps the main part of the page when it
 * runs. Product → its get-offers form → offers, each with Choose → the rest of the create-order
 * form and the customer → Create order (a redirect to the sale's page) → Pay from wallet or Record
 * payment (each a redirect back) → Download policy. The forms are validated against the partner
 * API's own request schemas and sent to its use cases, so a refusal is the API's reason, shown
 * beside the field it names.
 */

/** A form's fields: strings, or several values of one name; at most a few hundred. */
const FormBody = Type.Record(
  Type.String({ maxLength: 200 }),
  Type.Union([
    Type.String({ maxLength: 20_000 }),
    Type.Array(Type.String({ maxLength: 2_000 }), { maxItems: 100 }),
  ]),
  { maxProperties: 400 },
);

type Body = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));

/** What the offers a product's get-offers answers look like on the desk. */
interface DeskOffer {
  name: string;
  price: number;
  currency: string;
  details: string[];
  /** The offer's own values, handed to the create-order form. */
  chosen: Record<string, unknown>;
}

/**
 * The offers of a get-offers answer: its `offers` list, or, for the one product whose answer groups
 * them by insured amount (medical), every company's offer of every amount.
 */
function offersOf(answer: object): DeskOffer[] {
  // Cheapest first: the order a cashier compares them in (a stable sort keeps the API's among equals).
  return listedOffers(answer).sort((a, b) => a.price - b.price);
}

function listedOffers(answer: object): DeskOffer[] {
  const offers = (answer as { offers?: unknown }).offers;
  const scalars = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v === null || typeof v !== 'object'));
  if (Array.isArray(offers)) {
    return offers.map((o: Record<string, unknown>) => ({
      name: String(o.name ?? o.product),
      price: Number(o.price),
      currency: String(o.currency ?? 'MDL'),
      details: [
        o.reference_price ? `${String(o.reference_price)} (${String(o.reference_exchange_rate)})` : '',
        o.min_start_date ? `starts from ${String(o.min_start_date)}` : '',
        o.message ? String(o.message) : '',
      ].filter(Boolean),
      chosen: scalars(o),
    }));
  }
  if (offers && typeof offers === 'object') {
    return Object.entries(offers as Record<string, Record<string, unknown>[]>).flatMap(([amount, list]) =>
      list.map((o) => ({
        name: `${String(o.companyName)}, ${amount} EUR insured, ${String(o.region ?? '')}`.replace(/, $/, ''),
        price: Number(o.priceMDL),
        currency: 'MDL',
        details: [],
        chosen: { ...scalars(o), amount },
      })),
    );
  }
  return [];
}

/** The create-order fields an offer decides, under another name than its own. */
const OFFER_NAMES: Record<string, string> = { insurance_company: 'company', company_name: 'companyName' };
/** Fields of which a request holds one or the other: the quote's choice leaves the other out. */
const EITHER: readonly (readonly [string, string])[] = [['vehicle', 'foreign_vehicle']];
const notChosen = (quote: Record<string, unknown>): string[] =>
  EITHER.flatMap(([a, b]) => (quote[a] !== undefined ? [b] : quote[b] !== undefined ? [a] : []));

/** Fields an offer or the quote fill in that the cashier may still change. */
const EDITABLE = new Set(['start_date', 'end_date']);

export async function sellPages(app: App, svc: Services, render: Render): Promise<void> {
  const choicesFor =
    (product: string): Choices =>
    (path) => {
      const own = productChoices(svc, product);
      if (own[path]) return own[path];
      // A foreign vehicle's registration country is any but Moldova (a Moldovan car has a certificate).
      if (/(^|\.)registration_country$/.test(path)) return COUNTRY_CHOICES.filter((c) => c.value !== 'MD');
      return /(^|\.)(country|residence_country)$/.test(path) ? COUNTRY_CHOICES : undefined;
    };

  /** The first schema error as the API words it, and the form field it concerns. */
  function schemaRefusal(errors: readonly FastifySchemaValidationError[], strip: string) {
    const e = errors[0]!;
    const missing = e.keyword === 'required' ? `/${String(e.params.missingProperty)}` : '';
    const path = `${e.instancePath}${missing}`.replace(new RegExp(`^${strip}`), '');
    const message = schemaErrorMessage(errors, 'body')
      .replace(new RegExp(`^body${strip}/?`), '')
      .replace(/^body\//, '');
    return { message, path };
  }

  const validate = (req: FastifyRequest, schema: TSchema, data: unknown) => {
    const check = req.compileValidationSchema(schema as Record<string, unknown>);
    return check(data) ? undefined : (check.errors as FastifySchemaValidationError[]);
  };

  /**
   * A step's form sent to a partner API use case: the request checked against the API's own schema
   * (`strip` is where the form's fields sit in it), then `run`. A refusal of either is the form
   * `again`, with the reason beside the field of `keys` it names, or above the form.
   */
  function submit(
    req: FastifyRequest,
    o: {
      schema: TSchema;
      request: unknown;
      strip: string;
      keys: readonly string[];
      again: (
        fault: { errors: Map<string, string> } | { error: string },
        status: number,
      ) => Promise<FastifyReply>;
      run: () => Promise<FastifyReply>;
    },
  ): Promise<FastifyReply> {
    const refused = (message: string, at: string | undefined, status: number) => {
      const key = fieldOfReason(message, o.keys, at);
      return o.again(key ? { errors: new Map([[key, message]]) } : { error: message }, status);
    };
    const invalid = validate(req, o.schema, o.request);
    if (invalid) {
      const r = schemaRefusal(invalid, o.strip);
      return refused(r.message, r.path, 400);
    }
    return unlessRefused(o.run, (r) => refused(r.message, undefined, r.status));
  }

  /** Rows added or removed by a form's `Add …` and `Remove` buttons. */
  function reshape(body: Body, rows: Map<string, number>, values: Values): boolean {
    const add = one(body._add);
    const remove = one(body._remove);
    if (add) {
      rows.set(add, (rows.get(add) ?? 1) + 1);
      return true;
    }
    const m = /^(.+)\.(\d+)$/.exec(remove);
    if (!m) return false;
    const [, list, at] = m as unknown as [string, string, string];
    const n = rows.get(list) ?? 1;
    const index = Number(at);
    // Every later row moves up one.
    for (let i = index; i < n; i++) {
      for (const [k, v] of [...values]) {
        const prefix = `${list}.${i + 1}`;
        if (k === prefix || k.startsWith(`${prefix}.`))
          values.set(`${list}.${i}${k.slice(prefix.length)}`, v);
      }
      for (const k of [...values.keys()]) {
        const prefix = `${list}.${n - 1}`;
        if (i === n - 1 && (k === prefix || k.startsWith(`${prefix}.`))) values.delete(k);
      }
    }
    rows.set(list, Math.max(1, n - 1));
    return true;
  }

  /** What a step's form sends: the desk opened for the user, the product's module and the form's values. */
  const deskForm = (req: FastifyRequest) => {
    openDesk(userOf(req));
    const body = req.body as Body;
    const product = one(body.product);
    const m = sellModule(product);
    return { body, product, m, ...formValues(body) };
  };

  // Step 1: the product, and its get-offers form.
  const showQuote = async (
    req: FastifyRequest,
    reply: FastifyReply,
    product: string | undefined,
    state: {
      values: Values;
      rows: Map<string, number>;
      errors?: Map<string, string>;
      error?: string;
      /** Sell again: the order renewed and the new cover's first day, carried to the order form. */
      renewal?: { orderId: string; startDate: string } | undefined;
    } = {
      values: new Map(),
      rows: new Map(),
    },
    status = 200,
  ) => {
    openDesk(userOf(req));
    const m = product ? sellModule(product) : undefined;
    const fields = m ? fieldsOf(m.schemas.quote, { ...state, choices: choicesFor(m.product) }) : [];
    return render(
      req,
      reply,
      'sell',
      {
        title: 'Sell',
        current: 'sell',
        products: SELL_PRODUCTS,
        product: m?.product ?? '',
        productName: SELL_PRODUCTS.find((p) => p.code === m?.product)?.name,
        fields,
        error: state.error,
        renewal: state.renewal,
      },
      status,
    );
  };

  app.get(
    '/sell',
    { schema: { querystring: Type.Object({ product: Text(40), done: Text(40), again: Text(64) }) } },
    async (req, reply) => {
      const again = req.query.again;
      if (!again) return showQuote(req, reply, req.query.product || undefined);
      // Sell again: the old order's request filled in, the new cover from the day after the old one.
      return unlessRefused(
        async () => {
          const r = await renewalOf(svc, userOf(req), again);
          const { values, rows } = valuesOf(r.request);
          values.delete('product');
          if (r.startDate) values.set('start_date', r.startDate);
          const renewal = r.startDate ? { orderId: again, startDate: r.startDate } : undefined;
          return showQuote(req, reply, r.product, { values, rows, renewal });
        },
        (refused) =>
          render(req, reply, 'error', { title: 'Refused', message: refused.message }, refused.status),
      );
    },
  );

  /** The renewal a desk form carries (hidden fields), if it is well formed. */
  const renewalIn = (body: Body) => {
    const orderId = one(body.renew_order);
    const startDate = one(body.renew_from);
    return /^\d{4}-\d{2}-\d{2}$/.test(startDate) && orderId ? { orderId, startDate } : undefined;
  };

  // Step 2: the offers. Nothing changes here: the answer is the page.
  app.post('/sell/offers', { schema: { body: FormBody } }, async (req, reply) => {
    const { body, product, m, values, rows } = deskForm(req);
    const renewal = renewalIn(body);
    if (reshape(body, rows, values)) return showQuote(req, reply, product, { values, rows, renewal });
    const request = { product: m.product, ...requestOf(m.schemas.quote, values, rows) };
    const keys = keysOf(fieldsOf(m.schemas.quote, { values, rows, choices: choicesFor(product) }));
    return submit(req, {
      schema: routes.getOffers.body,
      request,
      strip: '',
      keys,
      again: (fault, status) => showQuote(req, reply, product, { values, rows, renewal, ...fault }, status),
      run: async () => {
        const offers = offersOf(await sellQuote(svc, userOf(req), request));
        return render(req, reply, 'sell-offers', {
          title: 'Offers',
          current: 'sell',
          renewal,
          product: m.product,
          productName: SELL_PRODUCTS.find((p) => p.code === m.product)!.name,
          quote: JSON.stringify(request),
          offers: offers.map((o) => ({ ...o, chosenJson: JSON.stringify(o.chosen) })),
        });
      },
    });
  });

  /** What the chosen offer and the quote fill in of the create-order form. */
  function prefill(product: string, quote: Record<string, unknown>, offer: Record<string, unknown>) {
    const m = sellModule(product);
    const tree = fieldsOf(m.schemas.order, {
      values: new Map(),
      rows: new Map(),
      choices: choicesFor(product),
    });
    const leaves = (fs: Field[]): Field[] =>
      fs.flatMap((f) => (f.kind === 'group' || f.kind === 'list' ? leaves(f.children ?? []) : [f]));
    const { values: fromQuote, rows } = valuesOf(quote);
    const values: Values = new Map();
    const fixed = new Set<string>();
    // A list of dates in the quote (medical's birthdays) fills the first date of each row.
    for (const list of (tree as Field[]).filter((f) => f.kind === 'list')) {
      const n = rows.get(list.key) ?? 0;
      if (n) rows.set(list.key, n);
      for (let i = 0; i < n; i++) {
        const given = fromQuote.get(`${list.key}.${i}`);
        const date = list.children?.[0]?.children?.find((c) => c.kind === 'date');
        if (typeof given === 'string' && date)
          values.set(`${list.key}.${i}.${date.key.split('.').at(-1)}`, given);
      }
    }
    for (const leaf of leaves(tree)) {
      const top = leaf.key.split('.')[0]!;
      const byOffer = offer[leaf.key] ?? offer[OFFER_NAMES[leaf.key] ?? ''];
      const v =
        byOffer !== undefined && byOffer !== null && leaf.key === top ? byOffer : fromQuote.get(leaf.key);
      if (v === undefined || v === '') continue;
      values.set(leaf.key, Array.isArray(v) ? v.map(String) : String(v));
      if (!EDITABLE.has(leaf.key)) fixed.add(leaf.key);
    }
    if (!values.has('start_date') && typeof offer.min_start_date === 'string') {
      values.set('start_date', offer.min_start_date);
    }
    return { values, rows, fixed };
  }

  const incomplete = () =>
    Object.assign(new Error('This form is incomplete: start again from Sell.'), { statusCode: 400 });
  const parseJson = (text: string): Record<string, unknown> => {
    try {
      const v: unknown = JSON.parse(text);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // refused below
    }
    throw incomplete();
  };
  // What the offers page sent back is trusted no more than any form: the quote must be a get-offers
  // request the API would take, and of the chosen offer only its plain values are read.
  const parseQuote = (req: FastifyRequest, text: string) => {
    const quote = parseJson(text);
    if (validate(req, routes.getOffers.body, quote)) throw incomplete();
    return quote;
  };
  const parseOffer = (text: string) =>
    Object.fromEntries(
      Object.entries(parseJson(text)).filter(([, v]) => v === null || typeof v !== 'object'),
    );

  // Step 3: the chosen offer's create-order form, with the customer.
  const showOrderForm = async (
    req: FastifyRequest,
    reply: FastifyReply,
    o: {
      product: string;
      quote: string;
      offer: string;
      token: string;
      values: Values;
      rows: Map<string, number>;
      customer: Record<string, string>;
      errors?: Map<string, string>;
      error?: string;
    },
    status = 200,
  ) => {
    openDesk(userOf(req));
    const m = sellModule(o.product);
    const quoted = parseQuote(req, o.quote);
    const { fixed } = prefill(o.product, quoted, parseOffer(o.offer));
    const fields = fieldsOf(m.schemas.order, {
      values: o.values,
      rows: o.rows,
      choices: choicesFor(o.product),
      skip: new Set([...fixed, ...notChosen(quoted)]),
      ...(o.errors ? { errors: o.errors } : {}),
    });
    const offer = parseOffer(o.offer);
    const all = fieldsOf(m.schemas.order, { values: new Map(), rows: new Map(), choices: () => undefined });
    const flat = (fs: Field[]): Field[] => fs.flatMap((f) => [f, ...flat(f.children ?? [])]);
    const labels = new Map(flat(all).map((f) => [f.key, f.label]));
    const chosen = [...fixed].map((key) => ({
      key,
      label: labels.get(key) ?? key,
      value: [o.values.get(key) ?? ''].flat(),
      error: o.errors?.get(key),
    }));
    return render(
      req,
      reply,
      'sell-order',
      {
        title: 'Create order',
        current: 'sell',
        product: m.product,
        productName: SELL_PRODUCTS.find((p) => p.code === m.product)!.name,
        offerName: String(offer.name ?? offer.companyName ?? ''),
        offerPrice: Number(offer.price ?? offer.priceMDL),
        quote: o.quote,
        offer: o.offer,
        token: o.token,
        fields,
        chosen,
        customer: o.customer,
        customerErrors: {
          name: o.errors?.get('customer.name'),
          phone: o.errors?.get('customer.phone'),
          email: o.errors?.get('customer.email'),
        },
        error: o.error,
      },
      status,
    );
  };

  app.post('/sell/order', { schema: { body: FormBody } }, async (req, reply) => {
    openDesk(userOf(req));
    const body = req.body as Body;
    const product = one(body.product);
    const quote = one(body.quote);
    const offer = one(body.offer);
    const { values, rows } = prefill(product, parseQuote(req, quote), parseOffer(offer));
    // Sell again: the new cover starts the day after the old one ends, whatever the offer's earliest.
    const renewal = renewalIn(body);
    if (renewal) values.set('start_date', renewal.startDate);
    return showOrderForm(req, reply, {
      product,
      quote,
      offer,
      // The form's one-time token: the idempotency key of the order it creates.
      token: Buffer.from(svc.randomBytes(18)).toString('base64url'),
      values,
      rows,
      customer: { name: '', phone: '', email: '' },
    });
  });

  // Step 4: the draft. A redirect to its page, so a reload creates nothing.
  app.post('/sell/orders', { schema: { body: FormBody } }, async (req, reply) => {
    const { body, product, m, values, rows } = deskForm(req);
    const token = one(body.token);
    if (!/^[A-Za-z0-9_-]{20,40}$/.test(token)) {
      throw Object.assign(new Error('This form is incomplete: start again from Sell.'), { statusCode: 400 });
    }
    const customer = { name: one(body['c.name']), phone: one(body['c.phone']), email: one(body['c.email']) };
    const state = { product, quote: one(body.quote), offer: one(body.offer), token, values, rows, customer };
    if (reshape(body, rows, values)) return showOrderForm(req, reply, state);
    const item = { product: m.product, ...requestOf(m.schemas.order, values, rows) };
    const input = {
      // Name and email may be left empty (the wire's customer holds them only when given).
      customer: {
        ...(customer.name.trim() ? { name: customer.name.trim() } : {}),
        ...(customer.email.trim() ? { email: customer.email.trim() } : {}),
        phone: customer.phone.trim(),
      },
      products: [item],
    };
    const keys = [
      ...keysOf(fieldsOf(m.schemas.order, { values, rows, choices: choicesFor(product) })),
      'customer.name',
      'customer.phone',
      'customer.email',
    ];
    return submit(req, {
      schema: routes.createOrder.body,
      request: input,
      strip: '/products/0',
      keys,
      again: (fault, status) => showOrderForm(req, reply, { ...state, ...fault }, status),
      run: async () => {
        const id = await sellCreateOrder(svc, userOf(req), token, input);
        return reply.redirect(`/portal/sell/orders/${encodeURIComponent(id)}`, 303);
      },
    });
  });

  // The sale's page: its price, the payments, and its policies when issued.
  const showSale = showById(render, 'sell-draft', async (req, id) => {
    const sale = await readSale(svc, userOf(req), id);
    return {
      title: `Order ${sale.order.id}`,
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

  app.post('/sell/orders/:id/wallet', { schema: { params: Id, body: FormBody } }, async (req, reply) =>
    unlessRefused(
      async () => {
        await sellPayFromWallet(svc, userOf(req), req.params.id);
        return reply.redirect(`/portal/sell/orders/${encodeURIComponent(req.params.id)}?done=paid`, 303);
      },
      (r) => showSale(req, reply, req.params.id, { error: r.message }, r.status),
    ),
  );

  app.post('/sell/orders/:id/payment', { schema: { params: Id, body: FormBody } }, async (req, reply) => {
    openDesk(userOf(req));
    const body = req.body as Body;
    const payment = {
      receipt_id: one(body.receipt_id).trim(),
      transaction_id: one(body.transaction_id).trim(),
    };
    const invalid = validate(req, routes.confirmOrder.body, {
      id: req.params.id,
      payment: { ...payment, paid_at: 1_000_000_000_000, amount: 0 },
    });
    const again = (message: string, status: number) => {
      const field = /receipt_id/.test(message)
        ? 'receipt_id'
        : /transaction_id/.test(message)
          ? 'transaction_id'
          : '';
      return showSale(
        req,
        reply,
        req.params.id,
        field ? { payment, paymentErrors: { [field]: message } } : { payment, error: message },
        status,
      );
    };
    if (invalid) return again(schemaRefusal(invalid, '').message.replace(/^payment\//, ''), 400);
    try {
      await sellRecordPayment(svc, userOf(req), req.params.id, payment);
    } catch (err) {
      const r = refusal(err);
      if (!r) throw err;
      return again(r.message, r.status);
    }
    return reply.redirect(
      `/portal/sell/orders/${encodeURIComponent(req.params.id)}?done=payment-recorded`,
      303,
    );
  });
}
