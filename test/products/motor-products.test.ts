import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payment, type Creds, type Harness } from '../support/harness.ts';
import {
  completeAndDownload as complete,
  harnessWithPartner,
  storedOrders as stored,
} from '../support/orders.ts';

/** green-card and road-tax from quote to policy PDF, and what each refuses. */
const NOW = '2026-11-21T10:00:00+02:00';
const PAID_AT = Date.parse(NOW) + 60_000;

let h: Harness;
let partner: Creds;
// A 2.5 % margin: every price below shows the margin on top of the tariff.
beforeAll(async () => ({ h, partner } = await harnessWithPartner(NOW, 'Motor Partner', 250)));
afterAll(() => h?.close());

const storedOrders = () => stored(h, partner);
const completeAndDownload = (id: string, price: number) => complete(h, partner, id, price, PAID_AT);

type Offer = Record<string, unknown> & { price: number; company: string; min_start_date: string };
const quote = (body: Record<string, unknown>) =>
  h.call<{ offers: Offer[]; error?: string }>('get-offers', body, partner);
const create = (...products: Record<string, unknown>[]) =>
  h.call('create-order', { customer: { phone: '+37369000111', name: 'Ion Popescu' }, products }, partner);
const GC_QUOTE = {
  product: 'green-card',
  region: 'EU',
  duration: 15,
  vehicle: '100000001',
  idnx: '2003000000016',
};
const gcItem = (over: Record<string, unknown> = {}) => ({
  product: 'green-card',
  vehicle: '100000001',
  start_date: '2026-11-25',
  duration: 15,
  region: 'EU',
  insurance_company: 'donaris',
  idnx: '2003000000016',
  ...over,
});

describe('green-card', () => {
  it('quotes every insurer at the EU tariff in MDL with the margin, and max_interval 180', async () => {
    const res = await quote(GC_QUOTE);
    expect(res.status).toBe(200);
    expect(res.body.offers.length).toBeGreaterThan(1);
    // 35.91 EUR × 19.3033 = 693.18 MDL; + 2.5 % margin = 710.51 MDL.
    expect(res.body.offers[0]).toEqual({
      product: 'green-card',
      name: 'Carte Verde 15 zile, Europa, Moldasig, HONDA CIVIC CHY999',
      company: 'moldasig',
      duration: 15,
      price: 710.51,
      currency: 'MDL',
      reference_price: '35.91 EUR',
      reference_exchange_rate: '1 EUR 19.3033 MDL',
      min_start_date: '2026-11-21',
      max_interval: 180,
    });
    expect(new Set(res.body.offers.map((o) => o.company)).size).toBe(res.body.offers.length);
  });

  it('prices UA lower and goods vehicles and buses higher than a car', async () => {
    const ua = await quote({ ...GC_QUOTE, region: 'UA', duration: 365 });
    expect(ua.body.offers[0]).toMatchObject({ reference_price: '21.00 EUR' });
    const car = (await quote({ ...GC_QUOTE, duration: 30 })).body.offers[0]!;
    for (const vehicle of ['100000005', '100000006', '100000007', '100000008']) {
      const other = (await quote({ ...GC_QUOTE, duration: 30, vehicle, idnx: '1021600002204' })).body
        .offers[0]!;
      expect(other.price).toBeGreaterThan(car.price);
    }
  });

  it('goes from order to a completed policy with every issued field and a PDF', async () => {
    const offer = (await quote(GC_QUOTE)).body.offers.find((o) => o.company === 'donaris')!;
    const created = await create(gcItem());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^IAE\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Asigurare Carte Verde, 15 zile, Europa, HONDA CIVIC CHY999',
      price: offer.price,
      currency: 'MDL',
    });
    const id = created.body.id as string;
    const { order, products, pdfs } = await completeAndDownload(id, offer.price);
    expect(order).toMatchObject({ start_date: '2026-11-25', end_date: '2026-12-09', price: 710.51 });
    expect(products).toEqual([
      {
        product: 'green-card',
        plate_number: 'CHY999',
        car_model: 'HONDA CIVIC',
        validity: 15,
        reference_price: '35.91 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        price: 710.51,
        currency: 'MDL',
        file: expect.any(String),
      },
    ]);
    for (const s of [
      'CHY999',
      'HONDA CIVIC',
      '25.11.2026',
      '09.12.2026',
      '710.51 MDL',
      'Donaris VIG',
      'Europa',
    ])
      expect(pdfs[0]).toContain(s);
  });

  it('fails the order when the insurer refuses the vehicle (100000010)', async () => {
    const created = await create(gcItem({ vehicle: '100000010' }));
    const id = created.body.id as string;
    const paid = await h.call(
      'confirm-order',
      { id, payment: payment(created.body.price as number, { paid_at: PAID_AT }) },
      partner,
    );
    expect(paid.status).toBe(200);
    const failed = await h.waitForStatus(id, 'failed', { creds: partner });
    expect(failed.body.products).toBeUndefined();
  });

  it('describes a UA card as Ucraina', async () => {
    const created = await create(gcItem({ region: 'UA', duration: 30 }));
    expect(created.body.description).toBe('Asigurare Carte Verde, 30 zile, Ucraina, HONDA CIVIC CHY999');
  });

  it('refuses bad requests on get-offers with 400 (404 for an unknown vehicle)', async () => {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ ...GC_QUOTE, region: undefined }, 400, /region/],
      [{ ...GC_QUOTE, region: 'RU' }, 400, /region/],
      [{ ...GC_QUOTE, duration: 45 }, 400, /duration/],
      [{ ...GC_QUOTE, vehicle: '12345' }, 400, /vehicle/],
      [{ ...GC_QUOTE, idnx: '2003000000017' }, 400, /idnx has an invalid check digit/],
      [{ ...GC_QUOTE, vehicle: '999999999' }, 404, /Vehicle not found/],
      // Both wrong: the refusals are gathered (decision 0098), but the answer is the first one's.
      [{ ...GC_QUOTE, vehicle: '999999999', idnx: '2003000000017' }, 404, /^Vehicle not found$/],
    ];
    for (const [body, status, reason] of cases) {
      const res = await quote(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error).toMatch(reason);
    }
  });

  it('refuses bad orders with 400 (schema) or 500 [API] and stores nothing', async () => {
    const before = await storedOrders();
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [gcItem({ insurance_company: undefined }), 400, /insurance_company/],
      [gcItem({ region: 'XX' }), 400, /region/],
      [gcItem({ duration: 365.5 }), 400, /duration/],
      [gcItem({ start_date: '25.11.2026' }), 400, /start_date/],
      [gcItem({ insurance_company: 'nobody' }), 500, /^\[API\] Unknown insurance_company nobody$/],
      [gcItem({ idnx: '1021600002205' }), 500, /^\[API\] idnx has an invalid check digit$/],
      [gcItem({ vehicle: '999999999' }), 500, /^\[API\] Vehicle not found$/],
      [gcItem({ vehicle: '999999999', idnx: '1021600002205' }), 500, /^\[API\] Vehicle not found$/],
      [
        gcItem({ start_date: '2026-11-20' }),
        500,
        /^\[API\] start_date must be between 2026-11-21 and 2027-05-20$/,
      ],
      [gcItem({ start_date: '2027-05-21' }), 500, /between 2026-11-21 and 2027-05-20/],
    ];
    for (const [item, status, reason] of cases) {
      const res = await create(item);
      expect(res.status, JSON.stringify(item)).toBe(status);
      expect(res.body.message).toMatch(reason);
    }
    expect(await storedOrders()).toEqual(before);
  });
});

const RT_QUOTE = { product: 'road-tax', vehicle: '100000001', idnx: '2003000000016' };
const rtItem = (over: Record<string, unknown> = {}) => ({
  product: 'road-tax',
  vehicle: '100000001',
  idnx: '2003000000016',
  contractor_full_name: 'Ion Popescu',
  locality_id: 100000,
  locality_name: 'Chișinău',
  region: 'mun. Chișinău',
  ...over,
});

describe('road-tax', () => {
  it('quotes the owner’s annual tax by engine size for 12 months from today', async () => {
    const res = await quote(RT_QUOTE);
    expect(res.status).toBe(200);
    // 1798 cm³ → 450.00 MDL tax + 10.00 MDL fee = 460.00; + 2.5 % = 471.50 MDL.
    expect(res.body.offers).toEqual([
      {
        product: 'road-tax',
        name: 'Taxa de drum 21.11.2026 – 20.11.2027, HONDA CIVIC CHY999',
        car_model: 'HONDA CIVIC',
        plate_number: 'CHY999',
        price: 471.5,
        currency: 'MDL',
        min_start_date: '2026-11-21',
        max_interval: 365,
      },
    ]);
    const truck = await quote({ ...RT_QUOTE, vehicle: '100000006', idnx: '1021600002204' });
    expect(truck.body.offers[0]!.price).toBeGreaterThan(471.5);
  });

  it('goes from order to a completed payment confirmation with every issued field and a PDF', async () => {
    const created = await create(rtItem());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^TFD\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Taxa de drum, HONDA CIVIC CHY999',
      price: 471.5,
      currency: 'MDL',
    });
    const { products, pdfs } = await completeAndDownload(created.body.id as string, 471.5);
    expect(products).toEqual([
      {
        product: 'road-tax',
        plate_number: 'CHY999',
        car_model: 'HONDA CIVIC',
        vin_code: '2HGFC2F59GH000001',
        start_date: '2026-11-21',
        end_date: '2027-11-20',
        price: 471.5,
        currency: 'MDL',
        file: expect.any(String),
      },
    ]);
    for (const s of ['CHY999', 'Ion Popescu', '21.11.2026', '20.11.2027', '471.50 MDL', 'Chișinău'])
      expect(pdfs[0]).toContain(s);
  });

  it('is not payable from the wallet', async () => {
    const created = await create(rtItem());
    const res = await h.call('pay-order-from-balance', { id: created.body.id }, partner);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Balance cannot be applied to this order');
  });

  it('refuses bad quotes and orders and stores nothing', async () => {
    const quotes: [Record<string, unknown>, number, RegExp][] = [
      [{ product: 'road-tax', vehicle: '100000001' }, 400, /idnx/],
      [{ ...RT_QUOTE, idnx: '2003000000017' }, 400, /check digit/],
      [{ ...RT_QUOTE, idnx: '2005123456783' }, 400, /not the registered owner/],
      [{ ...RT_QUOTE, vehicle: '999999999' }, 404, /Vehicle not found/],
    ];
    for (const [body, status, reason] of quotes) {
      const res = await quote(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error).toMatch(reason);
    }
    const before = await storedOrders();
    const orders: [Record<string, unknown>, number, RegExp][] = [
      [rtItem({ locality_id: undefined }), 400, /locality_id/],
      [rtItem({ locality_id: '100000' }), 400, /locality_id/],
      [rtItem({ contractor_full_name: '' }), 400, /contractor_full_name/],
      [rtItem({ region: undefined }), 400, /region/],
      [rtItem({ idnx: '2005123456783' }), 500, /^\[API\] idnx is not the registered owner of the vehicle$/],
      [rtItem({ idnx: '2003000000017' }), 500, /^\[API\] idnx has an invalid check digit$/],
      [rtItem({ vehicle: '999999999' }), 500, /^\[API\] Vehicle not found$/],
    ];
    for (const [item, status, reason] of orders) {
      const res = await create(item);
      expect(res.status, JSON.stringify(item)).toBe(status);
      expect(res.body.message).toMatch(reason);
    }
    expect(await storedOrders()).toEqual(before);
  });
  it('issues no vin_code when the registry holds no VIN (100000004)', async () => {
    const created = await create(rtItem({ vehicle: '100000004' }));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { products } = await completeAndDownload(created.body.id as string, created.body.price as number);
    expect(products[0]).toMatchObject({ product: 'road-tax', plate_number: 'NOV004' });
    expect(products[0]).not.toHaveProperty('vin_code');
  });
});
