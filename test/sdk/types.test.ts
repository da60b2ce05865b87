import { describe, expectTypeOf, it } from 'vitest';
import {
  Polita,
  type IssuedProduct,
  type Order,
  type OrderItem,
  type QuoteResponses,
} from '../../sdk/src/index.ts';
import { rcaItem } from './support.ts';

/**
 * Compile-time checks, made by `npm run typecheck` (tsconfig includes test/): the per-product types
 * generated from the service's schemas accept a product's own fields and refuse another's. Nothing
 * here sends a request: the calls sit in functions that are never run.
 */
const polita = new Polita({ baseUrl: 'http://127.0.0.1:9', partnerId: 'p', secret: 's' });
const customer = { phone: '+37369123456' };

describe('SDK types', () => {
  it('type a quote by its product', () => {
    const _quotes = async () => {
      const rca = await polita.getOffers({
        product: 'rca',
        vehicle: '100000001',
        duration: 365,
        idnx: '2003000000016',
      });
      expectTypeOf(rca).toEqualTypeOf<QuoteResponses['rca']>();
      expectTypeOf(rca.offers[0]!.company).toEqualTypeOf<string | undefined>();

      const medical = await polita.getOffers({
        product: 'medical',
        covered_territories: ['EUROPE'],
        persons: ['1990-01-01'],
        start_date: '2030-01-01',
        is_multiple_type: false,
        include_additional_risk: false,
        activity: 'TRVL',
      });
      expectTypeOf(medical.offers).toEqualTypeOf<QuoteResponses['medical']['offers']>();

      // @ts-expect-error region is a green-card field, not an rca one
      await polita.getOffers({ product: 'rca', vehicle: '1', duration: 365, idnx: '1', region: 'EU' });
      // @ts-expect-error rca sells 365 days only
      await polita.getOffers({ product: 'rca', vehicle: '1', duration: 30, idnx: '1' });
      // @ts-expect-error idnx is required for rca
      await polita.getOffers({ product: 'rca', vehicle: '1', duration: 365 });
      // @ts-expect-error not a product
      await polita.getOffers({ product: 'boat', vehicle: '1' });
    };
    expectTypeOf(_quotes).toBeFunction();
  });

  it('type each create-order product object by its product', () => {
    const _orders = async () => {
      const order = await polita.createOrder({
        customer,
        products: [
          rcaItem('2030-01-01'),
          {
            product: 'green-card',
            vehicle: '100000001',
            start_date: '2030-01-01',
            duration: 30,
            region: 'EU',
            insurance_company: 'moldasig',
            idnx: '2003000000016',
          },
          {
            product: 'roadside-assistance-eu',
            vehicle: '100000001',
            start_date: '2030-01-01',
            period: '12_months',
          },
        ],
      });
      expectTypeOf(order).toEqualTypeOf<Order>();

      await polita.createOrder({
        customer,
        products: [
          {
            ...rcaItem('2030-01-01'),
            // @ts-expect-error region belongs to green-card
            region: 'EU',
          },
        ],
      });
      await polita.createOrder({
        customer,
        products: [
          {
            product: 'roadside-assistance-eu',
            vehicle: '1',
            start_date: '2030-01-01',
            // @ts-expect-error period must be one of the roadside periods
            period: '30_days',
          },
        ],
      });
      await polita.createOrder({
        // @ts-expect-error customer.phone is required
        customer: { name: 'Ion' },
        products: [],
      });
    };
    expectTypeOf(_orders).toBeFunction();
  });

  it('type the medical contractor as an individual or a company', () => {
    type Contractor = Extract<OrderItem, { product: 'medical' }>['contractor'];
    expectTypeOf({
      type: 'company',
      idnx: '1',
      address: 'a',
      fullName: 'SRL',
    } as const).toExtend<Contractor>();
    expectTypeOf({
      type: 'company',
      idnx: '1',
      address: 'a',
      full_name: 'SRL',
    } as const).toExtend<Contractor>();
    expectTypeOf({ type: 'company', idnx: '1', address: 'a' } as const).not.toExtend<Contractor>();
    expectTypeOf({
      type: 'individual',
      idnx: '1',
      address: 'a',
      fullName: 'x',
    } as const).not.toExtend<Contractor>();
  });

  it('type the writes, the answers and the issued products', () => {
    expectTypeOf(polita.payOrderFromBalance)
      .parameter(1)
      .toEqualTypeOf<{ idempotencyKey?: string } | undefined>();
    expectTypeOf(polita.getBalance).returns.resolves.toHaveProperty('wallets');
    expectTypeOf<Order['status']>().toEqualTypeOf<
      'draft' | 'paid' | 'processing' | 'failed' | 'completed' | 'refunded' | 'expired'
    >();
    const _issued = (p: IssuedProduct) => {
      if (p.product === 'green-card') expectTypeOf(p.validity).toEqualTypeOf<number | undefined>();
      if (p.product === 'vignette:ro') expectTypeOf(p.validity).toEqualTypeOf<string | undefined>();
      // @ts-expect-error an rca policy has no vignette_series
      if (p.product === 'rca') return p.vignette_series;
    };
    expectTypeOf(_issued).toBeFunction();
  });
});
