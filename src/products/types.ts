import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox';
import type { CustomerData, OrderItemRow } from '../db/schema.ts';
import type { PolicyField } from '../documents/policy-pdf.ts';
import type { IssueReceipt, IssueRequest, Providers } from '../providers/types.ts';

/** A value a form offers for a request field, and its words. */
export interface Choice {
  value: string;
  label: string;
}

/** Catalogue data shared by every product: rates and insurers (catalogue/common.json). */
export interface CommonCatalogue {
  version: string;
  /** Currency → MDL, as 10^4-scaled integers after loading ("19.3033" → 193033). */
  exchange_rates: Record<string, string>;
  insurers: { code: string; name: string }[];
  wallet_eligible_products: string[];
}

/** Everything a product rule may read: the moment, the partner, the catalogue, the providers. */
export interface ProductContext {
  /** Service clock, epoch ms (the sandbox test clock when set). */
  now: number;
  /** Local (Europe/Chisinau) date of `now`. */
  today: string;
  partner: { id: string; name: string; marginBp: number };
  customer?: CustomerData;
  common: CommonCatalogue;
  providers: Providers;
  /** Set while a completed order is priced again for its correction (decision 0088). */
  correcting?: string;
}

/** A validated, priced product of a draft order; stored as an order_items row. */
export interface PricedItem<Details = unknown> {
  price: number;
  description: string;
  startDate?: string;
  endDate?: string;
  /** The validated request and what pricing resolved (vehicle, tariff, rates): issuance reads it back. */
  details: Details;
}

/** Orders created at or after `from` and before `until` (ms, ±Infinity for open ends) can be paid now. */
export interface PayableWindow {
  from: number;
  until: number;
  /** Why an order created outside it cannot (a product rule's text). */
  reason: string;
}

/** An order item as stored, its `details` as the product's `price` wrote them. */
export type StoredItem<Details = unknown> = Omit<OrderItemRow, 'details'> & { details: Details };

/** What issuance produced for one product: its wire fields (all but `file`) and its policy document. */
export interface IssuedItem {
  fields: Record<string, unknown>;
  document: { title: string; fields: PolicyField[] };
}

/** A product's wire: its request schemas and the fields its offers and issued products add. */
export interface ProductSchemas<Quote extends TObject = TObject, Order extends TObject = TObject> {
  /** get-offers request (without `product`, which the HTTP layer adds). */
  quote: Quote;
  /** create-order product object (without `product`). */
  order: Order;
  /** Wire fields an offer of this product may carry, for the response schema. */
  offer: TProperties;
  /** Wire fields of the issued product (all but `product` and `file`), for the response schema. */
  issued: TProperties;
  /** A get-offers response of another shape than `{offers: Offer[]}` (medical). */
  quoteResponse?: TSchema;
}

/** What the provider is asked to cover (vehicle, plate, VIN, insurer); the order and dates come from the item. */
export type Cover = Omit<IssueRequest, 'product' | 'orderId' | 'idx' | 'startDate' | 'endDate'>;

/**
 * One product: its wire schemas, its rules and its issuance. `Details` is what `price` stores with
 * the order item and `issue` reads back; the request types are those of its schemas. The registry
 * holds them as `ProductModule` (every parameter at its default) and dispatches by `product`.
 */
export interface ProductModule<
  Cat = unknown,
  Details = unknown,
  Code extends string = string,
  Quote extends TObject = TObject,
  Order extends TObject = TObject,
> {
  product: Code;
  /** First three letters of an order id whose first product this is. */
  idPrefix: string;
  /** Issued after a visible `processing` stage (vignette:eu, roadside-assistance-eu); false when absent. */
  asyncIssue?: boolean;
  /** File name under catalogue/ and the schema it must satisfy; null for a product without one. */
  catalogue: { file: string; schema: TSchema } | null;
  schemas: ProductSchemas<Quote, Order>;
  /**
   * create-order echoes these dates (the contract: vignette:md start and end, vignette:eu start;
   * docs/api-reference.md#create-order).
   */
  createEchoes?: { startDate: boolean; endDate: boolean };
  /** The request was validated against `schemas.quote` by the HTTP layer. */
  quote(ctx: ProductContext, cat: Cat, req: Static<Quote>): Promise<object>;
  /** The item was validated against `schemas.order` by the HTTP layer. */
  price(ctx: ProductContext, cat: Cat, item: Static<Order>): Promise<PricedItem<Details>>;
  /**
   * A rule that can refuse payment of an already priced item (the RO tariff switch): when the
   * order was created outside the window this answers for now, paying it is refused with the
   * window's reason. A window, not a test of the item, so the wallet payment can ask it of the
   * order in SQL, in the statement that pays (src/db/repos/wallet-payments.ts).
   */
  payableWindow?(ctx: ProductContext, cat: Cat): PayableWindow;
  /**
   * The values a person picks a request field from, by the field's path (`covered_territories`,
   * `country`), where the schema holds no enumeration because the catalogue does. The portal's
   * sales desk shows them as lists (docs/decisions/0060-sales-desk-forms-from-schemas.md).
   */
  choices?(cat: Cat): Record<string, readonly Choice[]>;
  /**
   * A correction after the sale (correct-order, decision 0088): the create-order request that priced
   * the item, with the corrected fields in it, for `price` to price again; or why this item cannot
   * take them (a plate the registry gave, not the partner). Absent: the product is not corrected.
   */
  correct?(item: StoredItem<Details>, changes: Correction): { request: Static<Order> } | { refused: string };
  /** What the provider is asked to cover for a paid item; issuance buys it, then calls `issue`. */
  cover(item: StoredItem<Details>): Cover;
  /** The issued product from the provider's receipt: its wire fields (without `product`) and its document. */
  issue(ctx: ProductContext, cat: Cat, item: StoredItem<Details>, receipt: IssueReceipt): IssuedItem;
}

/** The fields a partner may correct after the sale; `plate_number` names the product's plate field. */
export interface Correction {
  plate_number?: string;
  start_date?: string;
}

/** A product's catalogue file under catalogue/: its code, a `:` written `-` (vignette:eu → vignette-eu.json). */
export const catalogueFile = (product: string): string => `${product.replace(':', '-')}.json`;

/**
 * Declares a product module: `defineProduct<Details>()(code, catalogueSchema, module)`. The details
 * type is named; the code, the catalogue's type and the request types are taken from the arguments
 * (the code literal, the schema the catalogue file `catalogueFile(code)` must satisfy, and the
 * module's schemas), so the rules are typed by what the catalogue's check lets through.
 */
export const defineProduct =
  <Details>() =>
  <const Code extends string, C extends TSchema, Quote extends TObject, Order extends TObject>(
    product: Code,
    catalogue: C,
    m: Omit<ProductModule<Static<C>, Details, Code, Quote, Order>, 'product' | 'catalogue'>,
  ): ProductModule<Static<C>, Details, Code, Quote, Order> => ({
    product,
    catalogue: { file: catalogueFile(product), schema: catalogue },
    ...m,
  });
