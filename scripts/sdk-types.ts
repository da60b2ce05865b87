import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { ErrorResponse, IssuedProduct, Offer, Order, routes } from '../src/http/schemas.ts';
import { eventSchemas } from '../src/http/event-routes.ts';
import { walletSchemas } from '../src/http/wallet-routes.ts';
import { afterSaleSchemas, CancelPreview, CorrectPreview } from '../src/http/after-sale-routes.ts';
import { PRODUCT_MODULES } from '../src/products/registry.ts';

/**
 * `npm run sdk:types`: writes sdk/src/types.ts, the SDK's wire types, from the very schemas that
 * validate and serialise the partner API (src/http/schemas.ts, src/http/wallet-routes.ts and each
 * product module). The SDK never imports src/, so its published declarations stand alone; the test
 * test/sdk/build.test.ts fails when the committed file differs from what this writes.
 */
export const TYPES_FILE = fileURLToPath(new URL('../sdk/src/types.ts', import.meta.url));

// TypeBox schemas are plain JSON Schema objects (plus symbol keys, which Object.entries skips).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = Record<string, any>;

/** Keywords that only constrain values (validation), never the TypeScript shape. */
const VALUE_ONLY = new Set([
  '$id',
  'description',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'discriminator',
  'title',
  'default',
  'examples',
  'example',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  'minProperties',
  'maxProperties',
]);
const SHAPE = new Set([
  'type',
  'properties',
  'required',
  'patternProperties',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
]);

/**
 * JSON Schema → a TypeScript type expression. `named` maps schema objects (by identity) and `$ref`
 * ids to type names emitted elsewhere. An unknown keyword stops the generator rather than being
 * dropped in silence, so a new construct in a schema cannot quietly loosen the SDK's types.
 */
class Emitter {
  private readonly named: Map<Schema, string>;
  private readonly refs: Record<string, string>;

  constructor(named: Map<Schema, string>, refs: Record<string, string>) {
    this.named = named;
    this.refs = refs;
  }

  type(s: Schema, path: string, top = false): string {
    if (!top && this.named.has(s)) return this.named.get(s)!;
    for (const key of Object.keys(s)) {
      if (!VALUE_ONLY.has(key) && !SHAPE.has(key))
        throw new Error(`sdk-types: unsupported keyword "${key}" at ${path}`);
    }
    if (s.$ref !== undefined) {
      const name = this.refs[s.$ref];
      if (!name) throw new Error(`sdk-types: no type for $ref "${s.$ref}" at ${path}`);
      return name;
    }
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
    const union = s.anyOf ?? s.oneOf;
    if (Array.isArray(union)) {
      return union.map((b: Schema, i: number) => this.type(b, `${path}/${i}`)).join(' | ');
    }
    if (Array.isArray(s.type))
      return s.type.map((t: string) => this.type({ ...s, type: t }, path)).join(' | ');
    switch (s.type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const item = this.type(s.items ?? {}, `${path}/items`);
        return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case 'object':
        return this.object(s, path);
      case undefined:
        if (Object.keys(s).every((k) => VALUE_ONLY.has(k))) return 'unknown';
    }
    throw new Error(`sdk-types: cannot type the schema at ${path}: ${JSON.stringify(s)}`);
  }

  /** An object; `allOf` of `if {x: const} then {required}` becomes one variant per value of x. */
  private object(s: Schema, path: string): string {
    if (s.allOf) return this.variants(s, path).join(' | ');
    const required = new Set<string>(s.required ?? []);
    const lines = Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([key, prop]) => {
      const doc = prop.description ? `/** ${String(prop.description).replace(/\*\//g, '* /')} */\n` : '';
      const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
      return `${doc}${name}${required.has(key) ? '' : '?'}: ${this.type(prop, `${path}/${key}`)};`;
    });
    const extra = [
      ...Object.values((s.patternProperties ?? {}) as Record<string, Schema>),
      ...(typeof s.additionalProperties === 'object' ? [s.additionalProperties as Schema] : []),
    ];
    if (extra.length) {
      lines.push(`[key: string]: ${extra.map((e, i) => this.type(e, `${path}/*${i}`)).join(' | ')};`);
    }
    return lines.length ? `{\n${lines.join('\n')}\n}` : 'Record<string, never>';
  }

  private variants(s: Schema, path: string): string[] {
    const { allOf, ...base }: Schema = s;
    const out: string[] = [];
    let discriminator: string | undefined;
    const covered: unknown[] = [];
    for (const [i, rule] of allOf.entries()) {
      const cond = Object.entries((rule.if?.properties ?? {}) as Record<string, Schema>);
      const [prop, when] = cond[0] ?? [];
      if (cond.length !== 1 || when?.const === undefined || !rule.then || Object.keys(rule).length !== 2) {
        throw new Error(
          `sdk-types: only allOf of "if {<key>: const} then {...}" is supported, at ${path}/allOf/${i}`,
        );
      }
      if (discriminator && discriminator !== prop) throw new Error(`sdk-types: mixed conditions at ${path}`);
      discriminator = prop;
      covered.push(when.const);
      const then = rule.then as Schema;
      const alternatives: string[][] = then.anyOf
        ? then.anyOf.map((a: Schema) => a.required ?? [])
        : [then.required ?? []];
      for (const extra of alternatives) {
        out.push(
          this.object(
            {
              ...base,
              properties: { ...base.properties, [prop!]: { const: when.const } },
              required: [...new Set([...(base.required ?? []), prop, ...extra])],
            },
            path,
          ),
        );
      }
    }
    const values = literals(base.properties?.[discriminator!]);
    const rest = values.filter((v) => !covered.includes(v));
    if (rest.length) {
      out.push(
        this.object({ ...base, properties: { ...base.properties, [discriminator!]: { enum: rest } } }, path),
      );
    }
    return out;
  }
}

/** The literal values a schema allows, or a throw when it allows more than literals. */
function literals(s: Schema | undefined): unknown[] {
  if (s?.const !== undefined) return [s.const];
  if (Array.isArray(s?.enum)) return s.enum;
  const union = s?.anyOf ?? s?.oneOf;
  if (Array.isArray(union)) return union.flatMap(literals);
  throw new Error(`sdk-types: a condition's key must be an enumeration, got ${JSON.stringify(s)}`);
}

const key = (p: string) => (/^[A-Za-z_$][\w$]*$/.test(p) ? p : `'${p}'`);

/** The TypeScript source of sdk/src/types.ts, formatted as the repository's Prettier settings say. */
export async function generate(): Promise<string> {
  const byProduct = (oneOf: Schema[]) =>
    new Map(oneOf.map((branch) => [branch.properties.product.const as string, branch]));
  const quoteBranches = byProduct(routes.getOffers.body.oneOf);
  const itemsSchema = (routes.createOrder.body.properties.products as Schema).items as Schema;
  const orderBranches = byProduct(itemsSchema.oneOf);
  const createBody = routes.createOrder.body;
  const confirmBody = routes.confirmOrder.body;

  const named = new Map<Schema, string>([
    [createBody.properties.customer, 'Customer'],
    [confirmBody.properties.payment, 'Payment'],
    [itemsSchema, 'OrderItem'],
  ]);
  const e = new Emitter(named, { IssuedProduct: 'IssuedProduct', Offer: 'Offer' });

  // Offers and issued products: every field the service may serialise for the product, all optional
  // as in the response schemas (Offer and IssuedProduct), with `product` as the product's literal.
  const ownKeys = new Set(PRODUCT_MODULES.flatMap((m) => Object.keys(m.schemas.offer)));
  const commonOfferKeys = Object.keys(Offer.properties).filter((k) => !ownKeys.has(k) && k !== 'product');
  // The product's own fields typed as its module declares them, the shared ones as the response schema.
  const pick = (shared: Schema, keys: string[]) =>
    Object.fromEntries(keys.map((k) => [k, shared.properties[k]]));
  const fields = (product: string, productRequired: boolean, ...parts: Schema[]) => ({
    type: 'object',
    properties: Object.assign({ product: { const: product } }, ...parts),
    required: productRequired ? ['product'] : [],
  });

  const out: string[] = [
    '// Generated by `npm run sdk:types` (scripts/sdk-types.ts) from the schemas that validate the',
    '// partner API: src/http/schemas.ts, src/http/wallet-routes.ts, src/http/after-sale-routes.ts,',
    '// src/http/event-routes.ts and src/products/*. Do not edit.',
    '',
    `/** The product strings. */`,
    `export type Product = ${PRODUCT_MODULES.map((m) => `'${m.product}'`).join(' | ')};`,
    '',
    '/** get-offers request body of each product. */',
    'export interface QuoteRequests {',
    ...PRODUCT_MODULES.map(
      (m) => `${key(m.product)}: ${e.type(quoteBranches.get(m.product)!, `quote/${m.product}`)};`,
    ),
    '}',
    '',
    '/** One offer of each product (get-offers). Not every product returns every field. */',
    'export interface Offers {',
    ...PRODUCT_MODULES.map(
      (m) =>
        `${key(m.product)}: ${e.type(
          fields(m.product, false, pick(Offer, commonOfferKeys), m.schemas.offer),
          `offer/${m.product}`,
        )};`,
    ),
    '}',
    '',
    '/** get-offers response body of each product. */',
    'export interface QuoteResponses {',
    ...PRODUCT_MODULES.map(
      (m) =>
        `${key(m.product)}: ${
          m.schemas.quoteResponse
            ? e.type(m.schemas.quoteResponse, `quote-response/${m.product}`, true)
            : `{ offers: Array<Offers[${JSON.stringify(m.product)}]> }`
        };`,
    ),
    '}',
    '',
    '/** A create-order product object of each product. */',
    'export interface OrderItems {',
    ...PRODUCT_MODULES.map(
      (m) => `${key(m.product)}: ${e.type(orderBranches.get(m.product)!, `order-item/${m.product}`)};`,
    ),
    '}',
    '',
    '/** An issued product of each product, in `products[]` of a completed order. */',
    'export interface IssuedProducts {',
    ...PRODUCT_MODULES.map(
      (m) =>
        `${key(m.product)}: ${e.type(
          fields(m.product, true, m.schemas.issued, pick(IssuedProduct, ['file'])),
          `issued/${m.product}`,
        )};`,
    ),
    '}',
    '',
    'export type Offer = Offers[Product];',
    'export type OrderItem = OrderItems[Product];',
    'export type IssuedProduct = IssuedProducts[Product];',
    `export type OrderStatus = ${e.type(Order.properties.status, 'order/status')};`,
    `export type Customer = ${e.type(createBody.properties.customer, 'customer', true)};`,
    `export type Payment = ${e.type(confirmBody.properties.payment, 'payment', true)};`,
    '',
    '/** create-order, confirm-order, pay-order-from-balance and get-order answer an order. */',
    `export type Order = ${e.type(Order, 'order', true)};`,
    '',
    '/** get-balance answer. */',
    `export type Balance = ${e.type(walletSchemas.getBalance.response[200], 'balance', true)};`,
    '',
    '/** Every error answer. */',
    `export type ErrorBody = ${e.type(ErrorResponse, 'error', true)};`,
    '',
    `export type CreateOrderRequest = ${e.type(createBody, 'create-order', true)};`,
    `export type ConfirmOrderRequest = ${e.type(confirmBody, 'confirm-order', true)};`,
    `export type GetOrderRequest = ${e.type(routes.getOrder.body, 'get-order', true)};`,
    `export type PayOrderFromBalanceRequest = ${e.type(walletSchemas.payOrderFromBalance.body, 'pay', true)};`,
    `export type CancelOrderRequest = ${e.type(afterSaleSchemas.cancelOrder.body, 'cancel-order', true)};`,
    `export type CorrectOrderRequest = ${e.type(afterSaleSchemas.correctOrder.body, 'correct-order', true)};`,
    '',
    '/** cancel-order without `quote_id`: the refund and a quote, or why the order cannot be cancelled. */',
    `export type CancelOrderPreview = ${e.type(CancelPreview, 'cancel-preview', true)};`,
    '/** correct-order without `quote_id`: a quote, or why the order cannot be corrected. */',
    `export type CorrectOrderPreview = ${e.type(CorrectPreview, 'correct-preview', true)};`,
    '',
    '/** list-events request and answer. */',
    `export type ListEventsRequest = ${e.type(eventSchemas.listEvents.body, 'list-events', true)};`,
    `export type EventsPage = ${e.type(eventSchemas.listEvents.response[200], 'events-page', true)};`,
    "export type PartnerEvent = EventsPage['events'][number];",
    "export type EventType = PartnerEvent['type'];",
    '',
    '/** resend-event request and answer. */',
    `export type ResendEventRequest = ${e.type(eventSchemas.resendEvent.body, 'resend-event', true)};`,
    `export type ResendEventAnswer = ${e.type(eventSchemas.resendEvent.response[202], 'resend-answer', true)};`,
    '',
  ];
  const options = await prettier.resolveConfig(TYPES_FILE);
  return prettier.format(out.join('\n'), { ...options, filepath: TYPES_FILE });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(TYPES_FILE, await generate());
  console.log(`wrote ${TYPES_FILE}`);
}
