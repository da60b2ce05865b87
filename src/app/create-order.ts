import { normalPhone } from '../domain/phone.ts';
import { DomainError, badRequest, recoded } from '../domain/errors.ts';
import { orderId } from '../domain/ids.ts';
import { endOfBusinessDay } from '../domain/time.ts';
import { insertOrder } from '../db/repos/orders.ts';
import type { CustomerData, NewOrderItem, PartnerRow } from '../db/schema.ts';
import { productModule } from '../products/registry.ts';
import type { PricedItem } from '../products/types.ts';
import { orderView } from './order-view.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

export interface CreateOrderInput {
  customer: CustomerData;
  products: ({ product: string } & Record<string, unknown>)[];
}

export const MAX_PRODUCTS_PER_ORDER = 10;

/**
 * create-order: every product validated and priced from the current tariff (the partner never
 * sends a price); one refused product refuses the order and nothing is stored.
 */
export async function createOrder(svc: Services, partner: PartnerRow, input: CreateOrderInput) {
  const { now, modules, priced } = await priceOrder(svc, partner, input);
  const first = modules[0]!;
  const at = new Date(now);
  const starts = priced
    .map((p) => p.startDate)
    .filter((d): d is string => !!d)
    .sort();
  const ends = priced
    .map((p) => p.endDate)
    .filter((d): d is string => !!d)
    .sort();
  const base = {
    partner_id: partner.id,
    status: 'draft' as const,
    description: priced.map((p) => p.description).join('; '),
    price: priced.reduce((sum, p) => sum + p.price, 0),
    currency: 'MDL',
    start_date: starts[0] ?? null,
    end_date: ends.at(-1) ?? null,
    customer: JSON.stringify(input.customer),
    customer_phone: normalPhone(input.customer.phone) ?? null,
    created_at: at,
    expires_at: new Date(endOfBusinessDay(now)),
    paid_at: null,
    payment_method: null,
    payment: null,
    completed_at: null,
    failure_reason: null,
    corrected_at: null,
    corrected_by: null,
    renewal_noticed_at: null,
    updated_at: at,
  };
  // Ids are random; a collision with an existing order is retried with a fresh one.
  for (let attempt = 0; ; attempt++) {
    const id = orderId(first.idPrefix, svc.randomBytes(9));
    const items: NewOrderItem[] = priced.map((p, idx) => ({
      order_id: id,
      idx,
      product: modules[idx]!.product,
      price: p.price,
      description: p.description,
      start_date: p.startDate ?? null,
      end_date: p.endDate ?? null,
      details: JSON.stringify(p.details),
      issued: null,
      file_token: null,
    }));
    try {
      await insertOrder(svc.db, { id, ...base }, items, `partner:${partner.id}`);
    } catch (err) {
      if (attempt < 3 && isUniqueViolation(err)) continue;
      throw err;
    }
    // The contract echoes dates for vignette:md (start and end) and vignette:eu (start): an order
    // that holds such a product echoes the order's dates, its earliest start and its latest end
    // (docs/api-reference.md#create-order).
    const echo = {
      startDate: modules.some((m) => m.createEchoes?.startDate),
      endDate: modules.some((m) => m.createEchoes?.endDate),
    };
    const row = { id, ...base, customer: input.customer, payment: null };
    return orderView(row, [], now, {
      dates: { start: echo.startDate, end: echo.endDate },
      publicBaseUrl: svc.config.publicBaseUrl,
    });
  }
}

export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string })?.code === '23505';

/**
 * Every product of a create-order request checked by its rules and priced from the current tariff,
 * at the service clock's now; stores nothing. The first refusal refuses the order.
 */
export async function priceOrder(svc: Services, partner: PartnerRow, input: CreateOrderInput) {
  if (input.products.length < 1 || input.products.length > MAX_PRODUCTS_PER_ORDER) {
    throw badRequest(`products must hold 1 to ${MAX_PRODUCTS_PER_ORDER} entries`);
  }
  const now = await svc.clock.now();
  const ctx = productContext(svc, now, partner, input.customer);
  const modules = input.products.map((p) => {
    const m = productModule(p.product);
    if (!m) throw badRequest(`Unknown product ${p.product}`);
    return m;
  });
  const priced: PricedItem[] = [];
  for (const [i, m] of modules.entries()) {
    try {
      priced.push(await m.price(ctx, catalogueOf(svc, m), input.products[i]!));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'vehicle_not_found')
        throw recoded(err, 'product_rule', 'Vehicle not found');
      throw err;
    }
  }
  return { now, modules, priced };
}
