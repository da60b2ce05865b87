import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { clockPayment, CLOCK, partnerWithMargin, pdfTextOf, storedOrders, TODAY } from './support.ts';

let h: Harness;
let partner: Creds;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock(CLOCK);
  partner = await partnerWithMargin(h, 0);
});
afterAll(() => h?.close());

const item = (over: Record<string, unknown> = {}) => ({
  product: 'vignette:md',
  identity_document: 'C01X00T47',
  driver_full_name: 'Hans Müller',
  country: 'DEU',
  start_date: '2026-11-25',
  period: '7_days',
  vehicle_category: 'M1',
  registration_number: 'B  ab 1234',
  vin: 'wdd2050071f000001',
  ...over,
});
const order = (
  over: Record<string, unknown> = {},
  customer: Record<string, unknown> = { phone: '+4915112345678' },
) => ({
  customer,
  products: [item(over)],
});

describe('vignette:md from quote to vignette PDF', () => {
  it('quotes the EUR tariff converted to MDL plus the 7 MDL minimum commission', async () => {
    const q = await h.call<{ offers: Record<string, unknown>[] }>(
      'get-offers',
      { product: 'vignette:md', period: '7_days', vehicle_category: 'M1' },
      partner,
    );
    expect(q.status).toBe(200);
    // 4.00 EUR × 19.3033 = 77.21 MDL, + max(1.5 % = 1.16, 7.00) = 84.21 MDL
    expect(q.body.offers).toEqual([
      {
        product: 'vignette:md',
        name: 'Vinieta Moldova, 7 zile, M1 (Autoturisme și remorci atașate)',
        price: 84.21,
        currency: 'MDL',
        reference_price: '4.00 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        min_start_date: TODAY,
        max_interval: 365,
      },
    ]);
  });

  it('takes 1.5 % when it exceeds 7 MDL, and the partner margin on top', async () => {
    const margined = await partnerWithMargin(h, 250);
    const q = await h.call<{ offers: { price: number }[] }>(
      'get-offers',
      { product: 'vignette:md', period: '12_months', vehicle_category: 'M2' },
      margined,
    );
    // 480 EUR → 9265.58 MDL; 1.5 % = 138.98; 9404.56 × 1.025 = 9639.67
    expect(q.body.offers[0]!.price).toBe(9639.67);
    const created = await h.call(
      'create-order',
      order({ period: '12_months', vehicle_category: 'M2', start_date: '2026-12-01' }),
      margined,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ price: 9639.67, start_date: '2026-12-01', end_date: '2027-11-30' });
  });

  it('orders, confirms and completes with every issued field and the PDF', async () => {
    const created = await h.call(
      'create-order',
      order({}, { phone: '+4915112345678', name: 'Hans Müller' }),
      partner,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^MDV\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Vinieta Moldova, 7 zile, Categoria M1, B AB 1234 (DE)',
      start_date: '2026-11-25',
      end_date: '2026-12-01',
      price: 84.21,
      currency: 'MDL',
    });
    const id = created.body.id as string;
    const confirmed = await h.call('confirm-order', { id, payment: clockPayment(84.21) }, partner);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const done = await h.waitForStatus(id, 'completed', { creds: partner });
    expect(done.body).toMatchObject({ start_date: '2026-11-25', end_date: '2026-12-01' });
    const products = done.body.products as Record<string, unknown>[];
    expect(products).toEqual([
      {
        product: 'vignette:md',
        registration_number: 'B AB 1234',
        vehicle_category: 'M1',
        period: '7_days',
        country: 'DE',
        vin: 'WDD2050071F000001',
        start_date: '2026-11-25',
        end_date: '2026-12-01',
        transaction_id: expect.stringMatching(/^\d{12}$/),
        reference_price: '4.00 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        price: 84.21,
        currency: 'MDL',
        file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
      },
    ]);
    const text = await pdfTextOf(h, products[0]!.file as string);
    for (const s of ['B AB 1234', 'Hans Müller', 'C01X00T47', '25.11.2026', '01.12.2026', '84.21 MDL', id])
      expect(text).toContain(s);
  });

  it('strips spaces from plates of other countries and ends a >180_days vignette after one year', async () => {
    const created = await h.call(
      'create-order',
      order({
        country: 'ro',
        registration_number: 'B 123 ABC',
        period: '>180_days',
        start_date: '2027-11-21',
      }),
      partner,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      description: 'Vinieta Moldova, peste 180 zile (12 luni), Categoria M1, B123ABC (RO)',
      start_date: '2027-11-21',
      end_date: '2028-11-20',
    });
  });

  it('accepts an IDNP as identity document (an MD resident driving a foreign car)', async () => {
    const created = await h.call('create-order', order({ identity_document: '2003000000016' }), partner);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  });
});

describe('vignette:md refusals store nothing', () => {
  const refusals: [string, Record<string, unknown>, number, string][] = [
    [
      'a period the category does not have',
      { period: '1_day' },
      500,
      '[API] Period 1_day is not sold for vehicle category M1; allowed: 7_days, 15_days, 30_days, 90_days, 180_days, >180_days',
    ],
    [
      'a car period for a bus',
      { vehicle_category: 'M3', period: '15_days' },
      500,
      '[API] Period 15_days is not sold for vehicle category M3; allowed: 1_day, 7_days, 30_days, 90_days, 12_months',
    ],
    ['country MD', { country: 'MD' }, 500, '[API] country must not be MD'],
    ['country MDA', { country: 'MDA' }, 500, '[API] country must not be MD'],
    [
      'an unknown ISO3',
      { country: 'XYZ' },
      500,
      '[API] country XYZ is not a known ISO2 or ISO3 country code',
    ],
    [
      'an IDNP with a wrong check digit',
      { identity_document: '2003000000017' },
      500,
      '[API] identity_document has an invalid check digit',
    ],
    [
      'a start date more than a year ahead',
      { start_date: '2027-11-22' },
      500,
      '[API] start_date must be between 2026-11-21 and 2027-11-21',
    ],
    [
      'a start date in the past',
      { start_date: '2026-11-20' },
      500,
      '[API] start_date must be between 2026-11-21 and 2027-11-21',
    ],
    [
      'a period outside the enumeration',
      { period: '2_days' },
      400,
      'body/products/0/period must be one of: 1_day, 7_days, 15_days, 30_days, 90_days, 180_days, >180_days, 12_months',
    ],
    [
      'a category outside the enumeration',
      { vehicle_category: 'L' },
      400,
      'body/products/0/vehicle_category must be one of: M1, M2, M3, N1, N2, N3',
    ],
    [
      'a VIN longer than 17',
      { vin: 'WDD2050071F0000012' },
      400,
      'body/products/0/vin must match pattern "^[A-Za-z0-9]{1,17}$"',
    ],
    ['a missing vin', { vin: undefined }, 400, "body/products/0 must have required property 'vin'"],
    [
      'a missing driver_full_name',
      { driver_full_name: undefined },
      400,
      "body/products/0 must have required property 'driver_full_name'",
    ],
    [
      'a malformed start date',
      { start_date: '25.11.2026' },
      400,
      'body/products/0/start_date must match format "date"',
    ],
  ];

  it.each(refusals)('refuses %s', async (_name, over, status, message) => {
    const before = await storedOrders(h, partner.id);
    const res = await h.call('create-order', order(over), partner);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.message).toBe(message);
    if (status === 500) expect(res.body.error).toBe('Internal Server Error');
    expect(await storedOrders(h, partner.id)).toBe(before);
  });

  it('answers 400 on get-offers for a period the category does not have, and for a missing field', async () => {
    const wrong = await h.call(
      'get-offers',
      { product: 'vignette:md', period: '12_months', vehicle_category: 'M1' },
      partner,
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe(
      'Period 12_months is not sold for vehicle category M1; allowed: 7_days, 15_days, 30_days, 90_days, 180_days, >180_days',
    );
    const missing = await h.call('get-offers', { product: 'vignette:md', period: '7_days' }, partner);
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe("body must have required property 'vehicle_category'");
  });
});
