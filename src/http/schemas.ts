import { Type, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ORDER_STATUSES } from '../domain/order-state.ts';
import { PRODUCT_MODULES } from '../products/registry.ts';

/**
 * Wire schemas of the partner API. Request schemas validate (types, formats, enumerations,
 * always-required fields); response schemas serialise (only listed fields leave the service)
 * and both produce the OpenAPI document.
 */
export const ErrorResponse = Type.Object(
  { statusCode: Type.Integer(), error: Type.String(), message: Type.String() },
  {
    $id: 'Error',
    description: '4xx: the reason in both fields. Product rules: 500 with message "[API] <reason>".',
  },
);

/** An operator request body: a field the route does not know is a 400 naming it (decision 0019). */
export const OperatorBody = <T extends TProperties>(properties: T): TObject<T> =>
  Type.Object(properties, { additionalProperties: false });

const errors = { '4xx': Type.Ref(ErrorResponse), '5xx': Type.Ref(ErrorResponse) };

/** The documentation of a partner route: `security` is set for every /v1 route by openapi.ts. */
export const partnerDoc = (summary: string, operationId: string) => ({
  tags: ['partner'],
  summary,
  operationId,
});

/**
 * A product's part of a request as the use cases take it: each product module validates its own
 * fields again (its schema is the branch below), so the handler needs only the `product` to route it.
 */
export type ProductRequest = { product: string } & Record<string, unknown>;

/**
 * A oneOf over the products, picked by `product` (Ajv discriminator), so errors name the right branch's
 * field. Each branch is titled (`VignetteRoQuote`, `RcaOrderItem`…): the API document names its variants so.
 */
function byProduct(
  pick: (m: (typeof PRODUCT_MODULES)[number]) => TObject,
  kind: string,
): TUnsafe<ProductRequest> {
  return Type.Unsafe<ProductRequest>({
    type: 'object',
    required: ['product'],
    discriminator: { propertyName: 'product' },
    oneOf: PRODUCT_MODULES.map((m) => {
      const s = pick(m);
      return {
        ...s,
        title: `${m.product.replace(/(?:^|[-:])([a-z])/g, (_, c: string) => c.toUpperCase())}${kind}`,
        properties: { product: Type.Literal(m.product), ...s.properties },
        required: ['product', ...(s.required ?? [])],
      };
    }),
  });
}

/** Merge every product's properties into one object schema; a name typed differently by two products becomes a union. */
function mergedObject(parts: TProperties[], base: TProperties, id: string): TObject {
  const props: Record<string, TSchema> = { ...base };
  for (const part of parts) {
    for (const [key, schema] of Object.entries(part)) {
      const prior = props[key];
      if (!prior) props[key] = schema;
      else if (JSON.stringify(prior) !== JSON.stringify(schema)) {
        const variants = 'anyOf' in prior ? (prior.anyOf as TSchema[]) : [prior];
        if (!variants.some((v) => JSON.stringify(v) === JSON.stringify(schema)))
          props[key] = Type.Union([...variants, schema]);
      }
    }
  }
  return Type.Object(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v)])), {
    $id: id,
  });
}

export const Offer = mergedObject(
  PRODUCT_MODULES.map((m) => m.schemas.offer),
  {
    product: Type.String(),
    name: Type.String(),
    price: Type.Number(),
    currency: Type.String(),
    reference_price: Type.String(),
    reference_exchange_rate: Type.String(),
    min_start_date: Type.String(),
    max_interval: Type.Number(),
  },
  'Offer',
);

export const IssuedProduct = mergedObject(
  PRODUCT_MODULES.map((m) => m.schemas.issued),
  { product: Type.String() },
  'IssuedProduct',
);
IssuedProduct.properties.file = Type.Optional(
  Type.String({ description: 'URL of the policy PDF; only on a completed order' }),
);

export const Order = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s))),
    description: Type.String(),
    start_date: Type.Optional(Type.String()),
    end_date: Type.Optional(Type.String()),
    price: Type.Number(),
    currency: Type.String(),
    products: Type.Optional(Type.Array(Type.Ref(IssuedProduct))),
    failure_reason: Type.Optional(
      Type.String({ description: 'Only on a failed or refunded order: why, in a sentence for a person' }),
    ),
    refund: Type.Optional(
      Type.Object(
        {
          amount: Type.Number({ description: 'MDL returned (to the wallet) or owed to the customer' }),
          fee: Type.Number({ description: 'MDL withheld by a cancellation’s rule; 0 otherwise' }),
          currency: Type.String(),
          to: Type.Union([Type.Literal('wallet'), Type.Literal('customer')]),
          at: Type.String({ description: 'ISO-8601 with offset: when the order was refunded' }),
        },
        { description: 'Only on a refunded order: what was refunded, to whom, when' },
      ),
    ),
  },
  { $id: 'Order' },
);

export const Customer = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  // The contract types it as a string only (docs/api-reference.md#create-order): a terminal that
  // sends "" or a half-typed address is not refused.
  email: Type.Optional(Type.String({ maxLength: 200 })),
  phone: Type.String({ minLength: 1, maxLength: 40 }),
});

export const Payment = Type.Object({
  receipt_id: Type.String({ minLength: 1, maxLength: 100 }),
  transaction_id: Type.String({ minLength: 1, maxLength: 100 }),
  paid_at: Type.Integer({
    minimum: 1_000_000_000_000,
    maximum: 9_999_999_999_999,
    description: 'Unix ms, 13 digits',
  }),
  amount: Type.Number({ minimum: 0 }),
  currency: Type.Optional(Type.String()),
  pos_id: Type.Optional(Type.String({ maxLength: 100 })),
});

const quoteResponses = PRODUCT_MODULES.flatMap((m) =>
  m.schemas.quoteResponse ? [m.schemas.quoteResponse] : [],
);
const OffersResponse = Type.Object({ offers: Type.Array(Type.Ref(Offer)) });
const quoteResponseByProduct = new Map(
  PRODUCT_MODULES.map((m) => [m.product as string, m.schemas.quoteResponse]),
);

/** The one get-offers 200 shape of a product; the route's 200 schema is the union of these. */
export const quoteResponseOf = (product: string): TSchema =>
  quoteResponseByProduct.get(product) ?? OffersResponse;

export const routes = {
  getOffers: {
    body: byProduct((m) => m.schemas.quote, 'Quote'),
    response: {
      200: quoteResponses.length ? Type.Union([OffersResponse, ...quoteResponses]) : OffersResponse,
      ...errors,
    },
  },
  createOrder: {
    body: Type.Object({
      customer: Customer,
      products: Type.Array(
        byProduct((m) => m.schemas.order, 'OrderItem'),
        { minItems: 1, maxItems: 10 },
      ),
    }),
    response: { 200: Type.Ref(Order), ...errors },
  },
  confirmOrder: {
    body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), payment: Payment }),
    response: { 200: Type.Ref(Order), ...errors },
  },
  getOrder: {
    body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
    response: { 200: Type.Ref(Order), ...errors },
  },
};

export const sharedSchemas = [ErrorResponse, Offer, IssuedProduct, Order];
