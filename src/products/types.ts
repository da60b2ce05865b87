import type { TObject, TProperties, TSchema } from '@sinclair/typebox';
import type { CustomerData, OrderItemRow } from '../db/schema.ts';
import type { PolicyField } from '../documents/policy-pdf.ts';
import type { Providers } from '../providers/types.ts';

export const PRODUCTS = [
  'vignette:ro',
  'green-card',
  'rca',
  'medical',
  'baggage',
  'road-tax',
  'vignette:md',
  'vignette:eu',
  'roadside-assistance-eu',
] as const;
export type ProductCode = (typeof PRODUCTS)[number];

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
}

/** A validated, priced product of a draft order; stored as an order_items row. */
export interface PricedItem {
  price: number;
  description: string;
  startDate?: string;
  endDate?: string;
  /** The validated request and what pricing resolved (vehicle, tariff, rates): issuance reads it back. */
  details: Record<string, unknown>;
}

/** What issuance produced for one product: its wire fields (all but `file`) and its policy document. */
export interface IssuedItem {
  fields: Record<string, unknown>;
  document: { title: string; fields: PolicyField[] };
}

export interface ProductModule<Cat = unknown> {
  product: ProductCode;
  /** First three letters of an order id whose first product this is. */
  idPrefix: string;
  /** Issued after a visible `processing` stage (vignette:eu, roadside-assistance-eu). */
  asyncIssue: boolean;
  /** File name under catalogue/ and the schema it must satisfy; null for a product without one. */
  catalogue: { file: string; schema: TSchema } | null;
  /** get-offers request (without `product`, which the HTTP layer adds). */
  quoteSchema: TObject;
  /** create-order product object (without `product`). */
  orderSchema: TObject;
  /** A get-offers response of another shape than `{offers: Offer[]}` (medical). */
  quoteResponse?: TSchema;
  /** Wire fields an offer of this product may carry, for the response schema. */
  offerProperties: TProperties;
  /** Wire fields of the issued product (all but `file`), for the response schema. */
  issuedProperties: TProperties;
  /** create-order echoes these dates (spec: vignette:md start and end, vignette:eu start). */
  createEchoes?: { startDate: boolean; endDate: boolean };
  quote(ctx: ProductContext, cat: Cat, req: Record<string, unknown>): Promise<object>;
  price(ctx: ProductContext, cat: Cat, item: Record<string, unknown>): Promise<PricedItem>;
  /** A rule that can refuse payment of an already priced item (the RO tariff switch). */
  checkPayable?(ctx: ProductContext, cat: Cat, item: OrderItemRow, orderCreatedAt: number): void;
  issue(ctx: ProductContext, cat: Cat, item: OrderItemRow, orderId: string): Promise<IssuedItem>;
}
