import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import {
  CLOCK,
  confirmAndWatchAsync,
  partnerWithMargin,
  pdfTextOf,
  storedOrders,
  TODAY,
  webhookSink,
  type WebhookSink,
} from './support.ts';

type Offer = Record<string, unknown>;
let h: Harness;
let partner: Creds;
let sink: WebhookSink;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock(CLOCK);
  sink = await webhookSink();
  partner = await partnerWithMargin(h, 0, sink.url);
});
afterAll(async () => {
  await h?.close();
  await sink?.close();
});

const quote = (body: Record<string, unknown>) =>
  h.call<{ offers: Offer[]; error?: string; message?: string }>(
    'get-offers',
    { product: 'vignette:eu', ...body },
    partner,
  );

const golf = {
  registration_country: 'AT',
  category: 'M1',
  plate_number: 'w 12345 x',
  vin: 'WVWZZZ1KZAW000123',
  make: 'Volkswagen',
  model: 'Golf',
  places: 5,
  max_authorized_mass: 1800,
};
const item = (over: Record<string, unknown> = {}) => ({
  product: 'vignette:eu',
  country: 'HU',
  validity: '10d',
  start_date: '2026-11-22',
  foreign_vehicle: golf,
  ...over,
});
const order = (
  over: Record<string, unknown> = {},
  customer: Record<string, unknown> = { phone: '+43664123456', name: 'Anna Gruber' },
) => ({
  customer,
  products: [item(over)],
});

describe('vignette:eu quotes', () => {
  it('lists every country on sale, tiered ones per vehicle class, in Romanian by default', async () => {
    const q = await quote({});
    expect(q.status).toBe(200);
    expect(new Set(q.body.offers.map((o) => o.country))).toEqual(
      new Set(['AT', 'BG', 'CZ', 'HU', 'RO', 'SK', 'SI', 'CH']),
    );
    // 12.40 EUR → 239.36 MDL, + max(3 % = 7.18, 10.00) = 249.36
    expect(q.body.offers.find((o) => o.country === 'AT' && o.validity === '10d')).toEqual({
      product: 'vignette:eu',
      name: 'Vinietă Austria, 10 zile',
      price: 249.36,
      currency: 'MDL',
      reference_price: '12.40 EUR',
      reference_exchange_rate: '1 EUR 19.3033 MDL',
      min_start_date: TODAY,
      max_interval: 30,
      country: 'AT',
      country_name: 'Austria',
      validity: '10d',
      duration: 10,
    });
    const hu = q.body.offers.filter((o) => o.country === 'HU' && o.validity === '10d');
    expect(hu.map((o) => o.vehicle_class)).toEqual(['D1', 'D2', 'B2']);
    expect(hu[0]).toMatchObject({
      name: 'Vinietă Ungaria, 10 zile, D1',
      country_name: 'Ungaria',
      price: 318.85,
      vehicle_class_info: 'Autoturisme de cel mult 7 locuri, până la 3,5 t',
    });
  });

  it('derives the class from the MD vehicle and localises only name, country_name and vehicle_class_info', async () => {
    const ro = await quote({ country: 'HU', vehicle: '100000001' });
    const en = await quote({ country: 'hu', vehicle: '100000001', lang: 'en' });
    const ru = await quote({ country: 'HU', vehicle: '100000001', lang: 'Ru' });
    expect(en.status).toBe(200);
    expect(en.body.offers.map((o) => [o.validity, o.vehicle_class])).toEqual([
      ['10d', 'D1'],
      ['1m', 'D1'],
      ['1y', 'D1'],
    ]);
    expect(en.body.offers[0]).toMatchObject({
      name: 'Vignette Hungary, 10 days, D1',
      country_name: 'Hungary',
      vehicle_class_info: 'Cars with at most 7 seats, up to 3.5 t',
    });
    expect(ru.body.offers[0]).toMatchObject({
      country_name: 'Венгрия',
      name: 'Виньетка Венгрия, 10 дней, D1',
    });
    const strip = (o: Offer) => ({ ...o, name: 0, country_name: 0, vehicle_class_info: 0 });
    expect(en.body.offers.map(strip)).toEqual(ro.body.offers.map(strip));
    expect(ru.body.offers.map(strip)).toEqual(ro.body.offers.map(strip));
  });

  it('never rejects for lang: unknown values read as RO', async () => {
    const ro = await quote({ country: 'SI', vehicle: '100000001' });
    for (const lang of ['de', 'xx', '', 'english', 'RO ', 'x'.repeat(50), 5, null, ['EN'], { lang: 'EN' }]) {
      const q = await quote({ country: 'SI', vehicle: '100000001', lang });
      expect(q.status, JSON.stringify(lang)).toBe(200);
      expect(q.body).toEqual(ro.body);
    }
    expect(ro.body.offers[0]).toMatchObject({ country_name: 'Slovenia', vehicle_class: '2A' });
  });

  it('filters to one validity option and picks the class from category, mass and seats', async () => {
    const one = await quote({ country: 'HU', vehicle: '100000001', validity: '1m' });
    expect(one.body.offers).toHaveLength(1);
    expect(one.body.offers[0]).toMatchObject({ validity: '1m', duration: 30 });
    const bus = await quote({ country: 'HU', vehicle: '100000007', validity: '10d' });
    expect(bus.body.offers.map((o) => o.vehicle_class)).toEqual(['B2']);
    const van = await quote({
      country: 'SI',
      foreign_vehicle: { registration_country: 'PL', category: 'N1' },
    });
    expect(van.body.offers.map((o) => o.vehicle_class)).toEqual(['2B', '2B', '2B']);
    const bigSeats = await quote({
      country: 'HU',
      foreign_vehicle: { registration_country: 'DE', category: 'M1', places: 9 },
    });
    expect(bigSeats.body.offers[0]!.vehicle_class).toBe('D2');
    const truck = await quote({ country: 'SI', vehicle: '100000006' });
    expect(truck.status).toBe(200);
    expect(truck.body.offers).toEqual([]);
    expect((await quote({ country: 'AT', validity: '7d' })).body.offers).toEqual([]);
  });

  it('answers no offers, not a refusal, for a destination not on sale', async () => {
    for (const body of [{ country: 'FR' }, { country: 'fr', vehicle: '100000001' }, { country: 'ZZ' }]) {
      const res = await quote(body);
      expect({ status: res.status, body: res.body }, JSON.stringify(body)).toEqual({
        status: 200,
        body: { offers: [] },
      });
    }
  });

  it('answers 400 for rule breaches and 404 for an unknown vehicle', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { vehicle: '100000001', foreign_vehicle: golf },
        400,
        'Send either vehicle or foreign_vehicle, not both',
      ],
      [
        { foreign_vehicle: { registration_country: 'MD', category: 'M1' } },
        400,
        'foreign_vehicle.registration_country must not be MD: use vehicle for an MD-registered vehicle',
      ],
      [{ start_date: '2026-12-22' }, 400, 'start_date must be between 2026-11-21 and 2026-12-21'],
      [{ vehicle: '999999999' }, 404, 'Vehicle not found'],
      [
        { foreign_vehicle: { registration_country: 'PL', category: 'X1' } },
        400,
        'body/foreign_vehicle/category must be one of: M1, M2, M3, N1, N2, N3, L, O1, O2, O3, O4',
      ],
    ];
    for (const [body, status, reason] of cases) {
      const q = await quote(body);
      expect(q.status, JSON.stringify(body)).toBe(status);
      expect(status === 400 && !reason.startsWith('body') ? q.body.error : q.body.message).toBe(reason);
    }
  });
});

describe('vignette:eu from order to vignette PDF', () => {
  it('passes through processing, completes with every issued field, then sends one webhook', async () => {
    const created = await h.call('create-order', order(), partner);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^EUV\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Vinietă Ungaria, 10 zile, W 12345 X',
      start_date: '2026-11-22',
      price: 318.85,
      currency: 'MDL',
    });
    const id = created.body.id as string;
    const done = await confirmAndWatchAsync(h, partner, sink, id, 318.85);
    expect(done).toMatchObject({ status: 'completed', start_date: '2026-11-22', end_date: '2026-12-01' });
    const products = done.products as Record<string, unknown>[];
    expect(products).toEqual([
      {
        product: 'vignette:eu',
        country: 'HU',
        validity: '10d',
        plate_number: 'W 12345 X',
        car_model: 'VOLKSWAGEN GOLF',
        vin: 'WVWZZZ1KZAW000123',
        registration_country: 'AT',
        document_number: expect.stringMatching(/^VIG\d{9}$/),
        transaction_id: expect.stringMatching(/^\d{12}$/),
        start_date: '2026-11-22',
        end_date: '2026-12-01',
        reference_price: '16.00 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        price: 318.85,
        currency: 'MDL',
        file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
      },
    ]);
    const text = await pdfTextOf(h, products[0]!.file as string);
    for (const s of [
      'W 12345 X',
      'Anna Gruber',
      'WVWZZZ1KZAW000123',
      '22.11.2026',
      '01.12.2026',
      '318.85 MDL',
      'Ungaria',
    ])
      expect(text).toContain(s);
  });

  it('issues for an MD vehicle from the registry (plate, model, VIN)', async () => {
    const created = await h.call(
      'create-order',
      order({ country: 'RO', validity: '30d', foreign_vehicle: undefined, vehicle: '100000001' }),
      partner,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    sink.received.length = 0;
    const done = await confirmAndWatchAsync(h, partner, sink, id, created.body.price as number);
    expect((done.products as Offer[])[0]).toMatchObject({
      country: 'RO',
      validity: '30d',
      plate_number: 'CHY999',
      car_model: 'HONDA CIVIC',
      vin: '2HGFC2F59GH000001',
      registration_country: 'MD',
      end_date: '2026-12-21',
    });
  });
});

describe('vignette:eu refusals store nothing', () => {
  const { vin: _vin, ...golfWithoutVin } = golf;
  const refusals: [string, Record<string, unknown>, number, string, Record<string, unknown>?][] = [
    [
      'both vehicle and foreign_vehicle',
      { vehicle: '100000001' },
      500,
      '[API] Exactly one of vehicle or foreign_vehicle is required',
    ],
    [
      'neither vehicle nor foreign_vehicle',
      { foreign_vehicle: undefined },
      500,
      '[API] Exactly one of vehicle or foreign_vehicle is required',
    ],
    [
      'a foreign vehicle without VIN',
      { foreign_vehicle: golfWithoutVin },
      400,
      "body/products/0/foreign_vehicle must have required property 'vin'",
    ],
    [
      'a registration country MD',
      { foreign_vehicle: { ...golf, registration_country: 'MD' } },
      500,
      '[API] foreign_vehicle.registration_country must not be MD: use vehicle for an MD-registered vehicle',
    ],
    [
      'an unknown validity',
      { validity: '7d' },
      500,
      '[API] Unknown validity 7d for country HU; available: 10d, 1m, 1y',
    ],
    [
      'a country not on sale',
      { country: 'FR' },
      500,
      '[API] No vignette:eu on sale for country FR; available: AT, BG, CZ, HU, RO, SK, SI, CH',
    ],
    [
      'a vehicle without a class there',
      { foreign_vehicle: { ...golf, category: 'N3' } },
      500,
      '[API] No HU vignette is sold for a vehicle of category N3 of this mass or size',
    ],
    [
      'an MD vehicle with no VIN in the registry',
      { foreign_vehicle: undefined, vehicle: '100000004' },
      500,
      '[API] The vehicle has no VIN or chassis number in the registry; the vignette cannot be issued without one',
    ],
    [
      'an unknown MD vehicle',
      { foreign_vehicle: undefined, vehicle: '999999999' },
      500,
      '[API] Vehicle not found',
    ],
    [
      'a start date past max_interval',
      { start_date: '2026-12-22' },
      500,
      '[API] start_date must be between 2026-11-21 and 2026-12-21',
    ],
    [
      'a missing validity',
      { validity: undefined },
      400,
      "body/products/0 must have required property 'validity'",
    ],
    [
      'a category outside the enumeration',
      { foreign_vehicle: { ...golf, category: 'car' } },
      400,
      'body/products/0/foreign_vehicle/category must be one of: M1, M2, M3, N1, N2, N3, L, O1, O2, O3, O4',
    ],
    [
      'no holder name',
      {},
      500,
      '[API] customer.name is required: it is the vignette holder',
      { phone: '+43664123456' },
    ],
  ];

  it.each(refusals)('refuses %s', async (_name, over, status, message, customer) => {
    const before = await storedOrders(h, partner.id);
    const res = await h.call('create-order', order(over, customer), partner);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.message).toBe(message);
    expect(await storedOrders(h, partner.id)).toBe(before);
  });
});
