import type { OrderStatus } from '../domain/order-state.ts';
import { PRODUCT_MODULES } from '../products/registry.ts';

/**
 * An order's issued products in words a support agent reads: each issued field under a label, in
 * the order its product lists them, and, for a product with no policy, why there is none.
 */

/** The label of each issued field the products put on the wire (src/products). */
export const ISSUED_LABELS = new Map<string, string>([
  ['vignette_series', 'Vignette series'],
  ['plate_number', 'Plate number'],
  ['registration_number', 'Registration number'],
  ['car_model', 'Car model'],
  ['vin', 'VIN'],
  ['vin_code', 'VIN'],
  ['vehicle_category', 'Vehicle category'],
  ['emission_class', 'Emission class'],
  ['emission_standard_name', 'Emission standard'],
  ['registration_country', 'Country of registration'],
  ['document_number', 'Document number'],
  ['country', 'Country'],
  ['region', 'Region'],
  ['period', 'Period'],
  ['validity', 'Validity'],
  ['coverage', 'Coverage'],
  ['start_date', 'Starts'],
  ['end_date', 'Ends'],
  ['insurance_company', 'Insurer'],
  ['insured_amount', 'Insured amount'],
  ['contractor_full_name', 'Policyholder'],
  ['idnp', 'Personal number (IDNP)'],
  ['flight_numbers', 'Flight numbers'],
  ['baggage_pcs', 'Pieces of baggage'],
  ['transaction_id', 'Provider’s transaction'],
  ['reference_price', 'Reference price'],
  ['reference_exchange_rate', 'Exchange rate'],
  ['supplier_exchange_rate', 'Supplier’s exchange rate'],
  ['price', 'Price'],
]);

/** Fields said elsewhere: the product has its own column, the currency goes with the price. */
export const UNLABELLED = new Set(['product', 'currency']);

/** The order of each product's issued fields, as its module declares them. */
const FIELD_ORDER = new Map<string, string[]>(
  PRODUCT_MODULES.map((m) => [m.product as string, Object.keys(m.schemas.issued)]),
);

/** `supplier_exchange_rate` → `Supplier exchange rate`: a field no label was written for yet. */
const humanised = (key: string) => {
  const words = key.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

function text(value: unknown, currency: unknown): string {
  if (value === null || value === undefined || value === '') return '–';
  if (Array.isArray(value)) return value.map((v) => text(v, undefined)).join(', ');
  if (typeof value === 'number' && typeof currency === 'string') return `${value.toFixed(2)} ${currency}`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The labelled fields of one issued product. */
export function issuedFields(
  product: string,
  issued: Record<string, unknown>,
): { label: string; value: string }[] {
  const keys = Object.keys(issued);
  const declared = FIELD_ORDER.get(product) ?? [];
  const ordered = [...declared.filter((k) => keys.includes(k)), ...keys.filter((k) => !declared.includes(k))];
  return ordered
    .filter((k) => !UNLABELLED.has(k))
    .map((k) => ({
      label: ISSUED_LABELS.get(k) ?? humanised(k),
      value: text(issued[k], k === 'price' ? issued.currency : undefined),
    }));
}

/** Why a product of an order in `status` has no policy (yet). */
export function withoutPolicy(status: OrderStatus): string {
  switch (status) {
    case 'draft':
      return 'Not yet: the order is not paid';
    case 'paid':
    case 'processing':
      return 'Not yet: it is being issued';
    case 'failed':
      return 'No policy: the order failed';
    case 'refunded':
      return 'No policy: the order failed and was refunded';
    case 'expired':
      return 'No policy: the draft expired unpaid';
    case 'completed':
      return 'No policy';
  }
}
