import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import {
  CLOCK,
  clockPayment,
  confirmAndWatchAsync,
  partnerWithMargin,
  pdfTextOf,
  sleep,
  storedOrders,
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

const quote = (vehicle: string) =>
  h.call<{ offers: Offer[]; error?: string; message?: string }>(
    'get-offers',
    { product: 'roadside-assistance-eu', vehicle },
    partner,
  );
const order = (over: Record<string, unknown> = {}) => ({
  customer: { phone: '+37369000111' },
  products: [
    {
      product: 'roadside-assistance-eu',
      vehicle: '100000001',
      start_date: '2026-11-23',
      period: '12_months',
      ...over,
    },
  ],
});

describe('roadside-assistance-eu quotes', () => {
  it('offers the three periods for a car up to 3.5 t, from today + 2 days, max_interval 60', async () => {
    const q = await quote('100000001');
    expect(q.status).toBe(200);
    const common = {
      product: 'roadside-assistance-eu',
      currency: 'MDL',
      reference_exchange_rate: '1 EUR 19.3033 MDL',
      min_start_date: '2026-11-23',
      max_interval: 60,
      car_model: 'HONDA CIVIC',
      plate_number: 'CHY999',
    };
    expect(q.body.offers).toEqual([
      {
        ...common,
        name: 'Asistență rutieră Europa, 15 zile, Romania + Europa, HONDA CIVIC CHY999',
        price: 231.64,
        reference_price: '12.00 EUR',
        period: '15_days',
      },
      {
        ...common,
        name: 'Asistență rutieră Europa, 12 luni, Romania + Europa, HONDA CIVIC CHY999',
        price: 752.83,
        reference_price: '39.00 EUR',
        period: '12_months',
      },
      {
        ...common,
        name: 'Asistență rutieră Europa, 12 luni Plus, Romania + Europa + Moldova, HONDA CIVIC CHY999',
        price: 1138.89,
        reference_price: '59.00 EUR',
        period: '12_months_plus',
      },
    ]);
    expect((await quote('100000011')).body.offers).toHaveLength(3);
  });

  it('gives vans, trucks and buses an empty list, not an error; an unknown vehicle is 404', async () => {
    for (const v of ['100000005', '100000006', '100000007', '100000008']) {
      const q = await quote(v);
      expect(q.status, v).toBe(200);
      expect(q.body, v).toEqual({ offers: [] });
    }
    const unknown = await quote('999999999');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Vehicle not found');
  });
});

describe('roadside-assistance-eu from order to contract PDF', () => {
  it('passes through processing, completes with every issued field, then sends one webhook', async () => {
    const created = await h.call('create-order', order(), partner);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^RSA\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Asistență rutieră Europa, 12 luni, HONDA CIVIC CHY999',
      price: 752.83,
      currency: 'MDL',
    });
    const id = created.body.id as string;
    const done = await confirmAndWatchAsync(h, partner, sink, id, 752.83);
    expect(done).toMatchObject({ start_date: '2026-11-23', end_date: '2027-11-22' });
    const products = done.products as Offer[];
    expect(products).toEqual([
      {
        product: 'roadside-assistance-eu',
        plate_number: 'CHY999',
        car_model: 'HONDA CIVIC',
        period: '12_months',
        coverage: 'Romania + Europa',
        vin_code: '2HGFC2F59GH000001',
        start_date: '2026-11-23',
        end_date: '2027-11-22',
        reference_price: '39.00 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        price: 752.83,
        currency: 'MDL',
        file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
      },
    ]);
    const text = await pdfTextOf(h, products[0]!.file as string);
    for (const s of [
      'CHY999',
      'Ion Popescu',
      '23.11.2026',
      '22.11.2027',
      '752.83 MDL',
      'Romania + Europa',
      id,
    ])
      expect(text).toContain(s);
  });

  it('issues a car the registry holds no VIN for without vin_code (100000004)', async () => {
    const created = await h.call('create-order', order({ vehicle: '100000004' }), partner);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const paid = await h.call(
      'confirm-order',
      { id, payment: clockPayment(created.body.price as number) },
      partner,
    );
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const done = await h.waitForStatus(id, 'completed', { creds: partner });
    const [issued] = done.body.products as Offer[];
    expect(issued).toMatchObject({ product: 'roadside-assistance-eu', plate_number: 'NOV004' });
    expect(issued).not.toHaveProperty('vin_code');
  });

  it('accepts the last day of the window and ends a 15-day contract on day 15', async () => {
    const last = await h.call('create-order', order({ start_date: '2027-01-22' }), partner);
    expect(last.status, JSON.stringify(last.body)).toBe(200);
    const short = await h.call(
      'create-order',
      order({ start_date: '2026-11-25', period: '15_days' }),
      partner,
    );
    expect(short.status).toBe(200);
    const confirmed = await h.call(
      'confirm-order',
      { id: short.body.id, payment: clockPayment(short.body.price as number) },
      partner,
    );
    expect(confirmed.body).toMatchObject({
      status: 'paid',
      start_date: '2026-11-25',
      end_date: '2026-12-09',
    });
  });

  it('fails the order the provider refuses (100000010) and sends no webhook', async () => {
    const created = await h.call('create-order', order({ vehicle: '100000010' }), partner);
    const id = created.body.id as string;
    await h.call('confirm-order', { id, payment: clockPayment(created.body.price as number) }, partner);
    const failed = await h.waitForStatus(id, 'failed', { creds: partner });
    expect(failed.body.products).toBeUndefined();
    await sleep(300);
    // Other orders of this file may still complete meanwhile; none of the webhooks may name this one.
    expect(sink.received.filter((r) => r.body.includes(id))).toEqual([]);
  });
});

describe('roadside-assistance-eu refusals store nothing', () => {
  const refusals: [string, Record<string, unknown>, number, string][] = [
    [
      'a start tomorrow (before today + 48 h)',
      { start_date: '2026-11-22' },
      500,
      '[API] start_date must be between 2026-11-23 and 2027-01-22',
    ],
    [
      'a start today',
      { start_date: '2026-11-21' },
      500,
      '[API] start_date must be between 2026-11-23 and 2027-01-22',
    ],
    [
      'a start past the 60-day window',
      { start_date: '2027-01-23' },
      500,
      '[API] start_date must be between 2026-11-23 and 2027-01-22',
    ],
    [
      'a van',
      { vehicle: '100000005' },
      500,
      '[API] Roadside assistance covers only category A (M1) vehicles up to 3500 kg; VAN005 is N1, 3500 kg',
    ],
    [
      'a bus',
      { vehicle: '100000007' },
      500,
      '[API] Roadside assistance covers only category A (M1) vehicles up to 3500 kg; BUS007 is M2, 5000 kg',
    ],
    ['an unknown vehicle', { vehicle: '999999999' }, 500, '[API] Vehicle not found'],
    [
      'a period outside the enumeration',
      { period: '6_months' },
      400,
      'body/products/0/period must be one of: 15_days, 12_months, 12_months_plus',
    ],
    [
      'a missing start_date',
      { start_date: undefined },
      400,
      "body/products/0 must have required property 'start_date'",
    ],
    [
      'a missing vehicle',
      { vehicle: undefined },
      400,
      "body/products/0 must have required property 'vehicle'",
    ],
    [
      'a short certificate',
      { vehicle: '12345' },
      400,
      'body/products/0/vehicle must match pattern "^[0-9]{9}$"',
    ],
  ];

  it.each(refusals)('refuses %s', async (_name, over, status, message) => {
    const before = await storedOrders(h, partner.id);
    const res = await h.call('create-order', order(over), partner);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.message).toBe(message);
    expect(await storedOrders(h, partner.id)).toBe(before);
  });
});
