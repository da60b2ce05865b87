import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrder, orderEvents } from '../../src/db/repos/orders.ts';
import { payment, startHarness, type Harness } from '../support/harness.ts';
import { extractPdfText } from '../support/pdf-text.ts';

/**
 * vignette:ro end to end on the sandbox clock: quote → order → pay → completed → PDF for an MD
 * and a foreign vehicle under both tariff systems, the draft that straddles the switch, and
 * issued vignettes that keep the regime they were issued under.
 */
type Offer = Record<string, unknown> & {
  price: number;
  duration: number;
  category: string;
  min_start_date: string;
};
let h: Harness;
let clockMs = 0;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

async function at(iso: string) {
  await h.setClock(iso);
  clockMs = Date.parse(iso);
}
const quote = async (body: Record<string, unknown>) => {
  const res = await h.call<{ offers: Offer[] }>('get-offers', { product: 'vignette:ro', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.offers;
};
const pick = (os: Offer[], category: string, duration: number) =>
  os.find((o) => o.category === category && o.duration === duration)!;
/** Quote → create → confirm → completed; the issued product and its PDF text. */
async function buy(
  q: Record<string, unknown>,
  item: Record<string, unknown>,
  category: string,
  duration: number,
) {
  const offer = pick(await quote(q), category, duration);
  expect(offer, `no ${category}${duration} offer`).toBeDefined();
  const created = await h.call('create-order', {
    customer: { phone: '+37369111222', name: 'Ion Țurcanu' },
    products: [{ product: 'vignette:ro', start_date: offer.min_start_date, duration, category, ...item }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  expect(created.body.price).toBe(offer.price);
  const id = created.body.id as string;
  const paid = await h.call('confirm-order', { id, payment: payment(offer.price, { paid_at: clockMs }) });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  const done = await h.waitForStatus(id, 'completed');
  const issued = (done.body.products as Record<string, unknown>[])[0]!;
  const pdf = await h.service.app.inject({ method: 'GET', url: new URL(issued.file as string).pathname });
  expect(pdf.statusCode).toBe(200);
  return { id, offer, order: done.body, issued, pdf: await extractPdfText(pdf.rawPayload) };
}

const DE_CAR = {
  registration_country: 'DE',
  category: 'M1',
  plate_number: 'm  ab 1234',
  vin: 'WVWZZZ1KZAW000001',
  make: 'Volkswagen',
  model: 'Golf',
};
let oldBus: { id: string; issued: Record<string, unknown> };

describe('before the switch (old tariff system)', () => {
  beforeAll(() => at('2026-09-22T10:00:00+03:00'));

  it('issues an MD bus as category G with the supplier rate and no emission fields, with a PDF', async () => {
    const r = await buy({ vehicle: '100000007' }, { vehicle: '100000007' }, 'G', 7);
    expect(r.order.description).toBe('Rovinieta, 7 zile, Categoria G, MERCEDES-BENZ SPRINTER BUS007');
    expect(r.issued).toEqual({
      product: 'vignette:ro',
      vignette_series: expect.stringMatching(/^VIG\d{9}$/),
      plate_number: 'BUS007',
      vehicle_category: 'G-Persoane, 9-23 locuri',
      vin_code: 'WDB9066331S000007',
      country: 'MD',
      transaction_id: expect.stringMatching(/^\d{12}$/),
      start_date: '2026-09-22 00:00:00',
      end_date: '2026-09-28 23:59:59',
      validity: '7 zile',
      reference_price: r.offer.reference_price,
      reference_exchange_rate: '1 RON 4.6302 MDL',
      supplier_exchange_rate: '1 EUR 4.9770 RON',
      price: r.offer.price,
      currency: 'MDL',
      file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
    });
    for (const s of [
      r.id,
      'BUS007',
      'MERCEDES-BENZ SPRINTER',
      'G-Persoane, 9-23 locuri',
      'WDB9066331S000007',
      r.issued.vignette_series as string,
      r.issued.transaction_id as string,
      '1 EUR 4.9770 RON',
      '1 RON 4.6302 MDL',
      r.offer.reference_price as string,
      'Ion Țurcanu',
      'Rovinietă',
    ])
      expect(r.pdf).toContain(s);
    expect(r.pdf).not.toContain('Clasa de emisii');
    oldBus = r;
  });

  it('shows the vignette it issued as active on the next quote for that vehicle', async () => {
    const os = await quote({ vehicle: '100000007' });
    expect(os[0]).toMatchObject({
      message:
        'Pentru vehicul categorie G nr.inmatriculare BUS007, exista rovinieta activa in perioada 22.09.2026 - 28.09.2026',
      min_start_date: '2026-09-29',
    });
  });

  it('issues an MD car the registry holds no VIN for without vin_code (100000004)', async () => {
    const r = await buy({ vehicle: '100000004' }, { vehicle: '100000004' }, 'A', 10);
    expect(r.issued).toMatchObject({
      plate_number: 'NOV004',
      vehicle_category: 'A-Autoturisme',
      country: 'MD',
    });
    expect(r.issued).not.toHaveProperty('vin_code');
  });

  it('issues a foreign car keeping the internal spaces of a German plate', async () => {
    const r = await buy({ foreign_vehicle: DE_CAR }, { foreign_vehicle: DE_CAR }, 'A', 10);
    expect(r.order.description).toBe('Rovinieta, 10 zile, Categoria A, VOLKSWAGEN GOLF M AB 1234');
    expect(r.issued).toMatchObject({
      plate_number: 'M AB 1234',
      vehicle_category: 'A-Autoturisme',
      vin_code: 'WVWZZZ1KZAW000001',
      country: 'DE',
      start_date: '2026-09-22 00:00:00',
      end_date: '2026-10-01 23:59:59',
      validity: '10 zile',
      supplier_exchange_rate: '1 EUR 4.9770 RON',
    });
    expect(r.issued).not.toHaveProperty('emission_class');
    for (const s of ['M AB 1234', 'DE', 'VOLKSWAGEN GOLF', 'WVWZZZ1KZAW000001']) expect(r.pdf).toContain(s);
    // The registry now knows it, by plate within its country and by VIN.
    const again = await quote({
      foreign_vehicle: { registration_country: 'DE', category: 'M1', plate_number: 'M AB 1234' },
    });
    expect(again[0]!.message).toBe(
      'Pentru vehicul categorie A nr.inmatriculare M AB 1234, exista rovinieta activa in perioada 22.09.2026 - 01.10.2026',
    );
    expect(again[0]!.min_start_date).toBe('2026-10-02');
    const byVin = await quote({
      foreign_vehicle: { registration_country: 'DE', category: 'M1', vin: DE_CAR.vin },
    });
    expect(byVin[0]!.min_start_date).toBe('2026-10-02');
  });

  it('fails the order when the registry refuses the vehicle (100000010)', async () => {
    const offer = pick(await quote({ vehicle: '100000010' }), 'A', 1);
    const created = await h.call('create-order', {
      customer: { phone: '1' },
      products: [
        {
          product: 'vignette:ro',
          vehicle: '100000010',
          start_date: offer.min_start_date,
          duration: 1,
          category: 'A',
        },
      ],
    });
    const id = created.body.id as string;
    expect(
      (await h.call('confirm-order', { id, payment: payment(offer.price, { paid_at: clockMs }) })).status,
    ).toBe(200);
    expect((await h.waitForStatus(id, 'failed')).body.products).toBeUndefined();
  });
});

describe('a draft created before the switch', () => {
  const create = async () => {
    const offer = pick(await quote({ vehicle: '100000011' }), 'A', 10);
    const created = await h.call('create-order', {
      customer: { phone: '+37369000001' },
      products: [
        {
          product: 'vignette:ro',
          vehicle: '100000011',
          start_date: offer.min_start_date,
          duration: 10,
          category: 'A',
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return { id: created.body.id as string, price: created.body.price as number };
  };

  it('is paid normally before midnight', async () => {
    await at('2026-09-30T23:50:00+03:00');
    const { id, price } = await create();
    await at('2026-09-30T23:55:00+03:00');
    const paid = await h.call('confirm-order', { id, payment: payment(price, { paid_at: clockMs }) });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.status).toBe('paid');
    // Issued before the next test quotes the same vehicle: its quote then always sees this vignette
    // active and starts after it, instead of racing its issuance between quote and create-order.
    await h.waitForStatus(id, 'completed');
  });

  it('cannot be paid after the switch, and stays exactly as it was', async () => {
    await at('2026-09-30T23:50:00+03:00');
    const { id, price } = await create();
    const before = await findOrder(h.service.svc.db, id);
    await at('2026-10-01T00:05:00+03:00');
    const reason =
      'The RO vignette price on this order is no longer valid (the vignette tariff system changed); create a new order';
    for (let i = 0; i < 2; i++) {
      const res = await h.call('confirm-order', { id, payment: payment(price, { paid_at: clockMs }) });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        statusCode: 500,
        error: 'Internal Server Error',
        message: `[API] Order ${id}: ${reason}`,
      });
    }
    const after = await findOrder(h.service.svc.db, id);
    expect(after).toEqual(before);
    expect(after!.status).toBe('draft');
    expect(after!.payment).toBeNull();
    expect((await orderEvents(h.service.svc.db, id)).map((e) => e.to)).toEqual(['draft']);
    // A new quote and order are priced under the new tariff and can be paid.
    const fresh = await create();
    expect(fresh.price).not.toBe(price);
    const paid = await h.call('confirm-order', {
      id: fresh.id,
      payment: payment(fresh.price, { paid_at: clockMs }),
    });
    expect(paid.status).toBe(200);
  });
});

describe('a draft created before the switch, paid from the wallet after it', () => {
  /** A one-day category B draft for the registry's vehicle 100000005, at the sandbox clock's time. */
  const categoryBDraft = async () => {
    const offer = pick(await quote({ vehicle: '100000005' }), 'B', 1);
    const created = await h.call('create-order', {
      customer: { phone: '+37369000002' },
      products: [
        {
          product: 'vignette:ro',
          vehicle: '100000005',
          start_date: offer.min_start_date,
          duration: 1,
          category: 'B',
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.id as string;
  };

  it('is refused with 400 and the bare reason; the order and the wallet stay as they were', async () => {
    await at('2026-09-30T23:50:00+03:00');
    const id = await categoryBDraft();
    const balance = (await h.call('get-balance', {})).body.wallets;
    await at('2026-10-01T00:05:00+03:00');
    const res = await h.call('pay-order-from-balance', { id });
    const reason =
      'The RO vignette price on this order is no longer valid (the vignette tariff system changed); create a new order';
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(reason);
    expect((await h.call('get-balance', {})).body.wallets).toEqual(balance);
    expect((await findOrder(h.service.svc.db, id))!.status).toBe('draft');
  });

  it('is paid when created and paid on the same side of the switch, before it or after it', async () => {
    for (const [created, paid] of [
      ['2026-09-30T23:40:00+03:00', '2026-09-30T23:55:00+03:00'],
      ['2026-10-01T00:05:00+03:00', '2026-10-01T00:20:00+03:00'],
    ] as const) {
      await at(created);
      const id = await categoryBDraft();
      await at(paid);
      const res = await h.call('pay-order-from-balance', { id });
      expect(res.status, `${created}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.status).toBe('paid');
    }
  });
});

describe('after the switch (new tariff system)', () => {
  beforeAll(() => at('2026-10-05T10:00:00+03:00'));

  it('issues an electric MD car as EC, with the class name and no supplier rate', async () => {
    const item = { vehicle: '100000002', emission_class: 'e4', emission_proof_declared: true };
    const r = await buy(item, item, 'A', 30);
    expect(r.offer.emission_class).toBe('EC');
    expect(r.issued).toEqual({
      product: 'vignette:ro',
      vignette_series: expect.stringMatching(/^VIG\d{9}$/),
      plate_number: 'EVX001',
      vehicle_category: 'A-Autoturisme',
      vin_code: '5YJ3E1EA7NF000002',
      emission_class: 'EC',
      emission_standard_name: 'Electric',
      country: 'MD',
      transaction_id: expect.stringMatching(/^\d{12}$/),
      start_date: '2026-10-05 00:00:00',
      end_date: '2026-11-03 23:59:59',
      validity: '30 zile',
      reference_price: r.offer.reference_price,
      reference_exchange_rate: '1 RON 4.6302 MDL',
      price: r.offer.price,
      currency: 'MDL',
      file: expect.any(String),
    });
    for (const s of ['EVX001', 'TESLA MODEL 3', 'Clasa de emisii', 'EC (Electric)', '30 zile'])
      expect(r.pdf).toContain(s);
    expect(r.pdf).not.toContain('Curs furnizor');
  });

  it('issues a bus of more than 23 seats as the new category D, class E0 whatever was declared', async () => {
    const item = { vehicle: '100000008', emission_class: 'E5', emission_proof_declared: true };
    const r = await buy(item, item, 'D', 365);
    expect(r.order.description).toBe('Rovinieta, 365 zile, Categoria D, SETRA S 515 HD BUS008');
    expect(r.issued).toMatchObject({
      vehicle_category: 'D-Persoane, peste 23 locuri',
      emission_class: 'E0',
      emission_standard_name: 'Euro 0 (non-Euro)',
      end_date: '2027-10-04 23:59:59',
      validity: '365 zile',
    });
  });

  it('issues a foreign light goods vehicle as B with the VIN it was sent', async () => {
    const fv = {
      registration_country: 'AT',
      category: 'N1',
      max_authorized_mass: 3000,
      plate_number: 'W 12345 X',
      vin: 'wf0xxxttgxkm00001',
    };
    const r = await buy({ foreign_vehicle: fv }, { foreign_vehicle: fv, emission_class: 'EC' }, 'B', 60);
    expect(r.offer.emission_class).toBe('E0');
    expect(r.issued).toMatchObject({
      plate_number: 'W 12345 X',
      vehicle_category: 'B-Marfa pana la 3,5 t',
      vin_code: 'WF0XXXTTGXKM00001',
      emission_class: 'E0',
      country: 'AT',
      end_date: '2026-12-03 23:59:59',
    });
    expect(r.issued).not.toHaveProperty('supplier_exchange_rate');
    expect(r.pdf).toContain('W 12345 X');
  });

  it('reads a vignette issued before the switch back with its old category and supplier rate', async () => {
    const res = await h.call('get-order', { id: oldBus.id });
    expect((res.body.products as unknown[])[0]).toEqual(oldBus.issued);
    // The vehicle itself now quotes under the new category C.
    expect((await quote({ vehicle: '100000007' }))[0]!.category).toBe('C');
  });
});
