import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEmissionClass, type RoVehicle } from '../../src/domain/ro-vignette.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * Every RO vignette rule and error text of the spec, in each regime that changes it:
 * before 25 Sep 2026 (classic), 25–30 Sep (only E0/EC sold), from 1 Oct 2026 (new tariff).
 */
type Offer = Record<string, unknown> & { price: number; duration: number; category: string };
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const CLASSIC = '2026-09-20T12:00:00+03:00';
const RESTRICTED = '2026-09-27T12:00:00+03:00';
const NEW = '2026-10-05T12:00:00+03:00';

const NO_VIN =
  'The vehicle has no VIN or chassis number in the registry; the RO vignette cannot be issued without one';
const DE_TRUCK = { registration_country: 'DE', category: 'N2', max_authorized_mass: 7000 };
const FR_CAR = {
  registration_country: 'FR',
  category: 'M1',
  plate_number: 'AB 123 CD',
  vin: 'VF1RFB00X56000001',
};

const quote = (body: Record<string, unknown>) =>
  h.call<{ offers: Offer[]; error?: string }>('get-offers', { product: 'vignette:ro', ...body });
const offers = async (body: Record<string, unknown>) => {
  const res = await quote(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.offers;
};
const order = (item: Record<string, unknown>) =>
  h.call('create-order', {
    customer: { phone: '+37369000000' },
    products: [{ product: 'vignette:ro', ...item }],
  });
const refused = async (body: Record<string, unknown>, reason: string) => {
  const res = await quote(body);
  expect(res.status).toBe(400);
  expect(res.body.error).toBe(reason);
};
const orderRefused = async (item: Record<string, unknown>, reason: string) => {
  const res = await order(item);
  expect(res.status, JSON.stringify(res.body)).toBe(500);
  expect(res.body).toEqual({ statusCode: 500, error: 'Internal Server Error', message: `[API] ${reason}` });
};
const grid = (os: Offer[]) => os.map((o) => `${o.category}${o.duration}`);

describe('before 25 September 2026: old categories A–H, emission rules enforced but price-neutral', () => {
  beforeAll(() => h.setClock(CLASSIC));

  it('quotes an MD car as category A with the old durations, RON reference and no emission_class', async () => {
    const os = await offers({ vehicle: '100000001' });
    expect(grid(os)).toEqual(['A1', 'A10', 'A30', 'A60', 'A365']);
    expect(os[1]).toEqual({
      product: 'vignette:ro',
      name: '10 zile, (A-Autoturisme), HONDA CIVIC CHY999',
      category: 'A',
      duration: 10,
      external_category: 'M1',
      // 6.00 EUR × 4.9770 = 29.86 RON; × 4.6302 = 138.26 MDL
      price: 138.26,
      currency: 'MDL',
      reference_price: '29.86 RON',
      reference_exchange_rate: '1 RON 4.6302 MDL',
      min_start_date: '2026-09-20',
      max_interval: 30,
      message: '',
    });
    expect(os[0]!.name).toBe('1 zile, (A-Autoturisme), HONDA CIVIC CHY999');
  });

  it('derives the old categories from the registry: B, E/F by mass, G and H by seats', async () => {
    expect(grid(await offers({ vehicle: '100000005' }))).toEqual(['B1', 'B10', 'B30', 'B60', 'B365']);
    expect(grid(await offers({ vehicle: '100000006' }))).toEqual([
      'E1',
      'E7',
      'E30',
      'E365',
      'F1',
      'F7',
      'F30',
      'F365',
    ]);
    const bus = await offers({ vehicle: '100000007' });
    expect(grid(bus)).toEqual(['G1', 'G7', 'G30', 'G365']);
    expect(bus[1]!.name).toBe('7 zile, (G-Persoane, 9-23 locuri), MERCEDES-BENZ SPRINTER BUS007');
    expect(grid(await offers({ vehicle: '100000008' }))).toEqual(['H1', 'H7', 'H30', 'H365']);
    expect(grid(await offers({ foreign_vehicle: DE_TRUCK }))).toEqual(['C1', 'C7', 'C30', 'C365']);
  });

  it('sells to a vehicle without a VIN in the registry (100000004) before the switch', async () => {
    expect(grid(await offers({ vehicle: '100000004' }))).toEqual(['A1', 'A10', 'A30', 'A60', 'A365']);
  });

  it('enforces the emission rules in order (code, declaration, year) without changing the price', async () => {
    const plain = await offers({ vehicle: '100000001' });
    expect(
      await offers({ vehicle: '100000001', emission_class: 'e6', emission_proof_declared: true }),
    ).toEqual(plain);
    await refused({ vehicle: '100000001', emission_class: 'E7' }, 'Invalid emission_class');
    await refused({ vehicle: '100000003', emission_class: 'X' }, 'Invalid emission_class');
    await refused(
      { vehicle: '100000001', emission_class: 'E1' },
      'emission_class requires emission_proof_declared',
    );
    await refused(
      { vehicle: '100000001', emission_class: 'EC', emission_proof_declared: false },
      'emission_class requires emission_proof_declared',
    );
    // The declaration is checked before the year.
    await refused(
      { vehicle: '100000003', emission_class: 'E6' },
      'emission_class requires emission_proof_declared',
    );
    for (const [cls, year] of [
      ['E4', 2003],
      ['E5', 2008],
      ['E6', 2011],
    ] as const) {
      await refused(
        { vehicle: '100000003', emission_class: cls, emission_proof_declared: true },
        `Emission class ${cls} requires a vehicle manufactured in ${year} or later`,
      );
    }
    expect(
      await offers({ vehicle: '100000003', emission_class: 'E3', emission_proof_declared: true }),
    ).toHaveLength(5);
    // An electric MD vehicle is EC whatever is sent, with no declaration.
    expect(await offers({ vehicle: '100000002', emission_class: 'E2' })).toHaveLength(5);
    // A foreign vehicle carries no year; EC needs the declaration.
    await refused(
      { foreign_vehicle: FR_CAR, emission_class: 'EC' },
      'emission_class requires emission_proof_declared',
    );
    expect(
      await offers({ foreign_vehicle: FR_CAR, emission_class: 'E6', emission_proof_declared: true }),
    ).toHaveLength(5);
  });

  it('answers create-order rejections as 500 [API] with the same texts', async () => {
    const base = { vehicle: '100000001', start_date: '2026-09-21', duration: 10, category: 'A' };
    await orderRefused({ ...base, emission_class: 'E8' }, 'Invalid emission_class');
    await orderRefused({ ...base, emission_class: 'E2' }, 'emission_class requires emission_proof_declared');
    await orderRefused(
      { ...base, vehicle: '100000003', emission_class: 'E5', emission_proof_declared: true },
      'Emission class E5 requires a vehicle manufactured in 2008 or later',
    );
    await orderRefused({ ...base, duration: 7 }, 'No Vignette found.');
    await orderRefused({ ...base, duration: 90 }, 'No Vignette found.');
    await orderRefused({ ...base, category: 'B' }, 'No Vignette found.');
    await orderRefused({ ...base, vehicle: '999999999' }, 'Vehicle not found');
    await orderRefused(
      { ...base, start_date: '2026-10-21' },
      'start_date must be between 2026-09-20 and 2026-10-20',
    );
    const bus = await order({ ...base, vehicle: '100000007', duration: 7, category: 'G' });
    expect(bus.status, JSON.stringify(bus.body)).toBe(200);
    expect(bus.body.description).toBe('Rovinieta, 7 zile, Categoria G, MERCEDES-BENZ SPRINTER BUS007');
    const ok = await order({ ...base, emission_class: 'e5', emission_proof_declared: true });
    expect(ok.body).toMatchObject({ status: 'draft', price: 138.26 });
    expect(ok.body.id).toMatch(/^ROV\d{6}[A-Z]{3}$/);
  });

  it('checks the vehicle: exactly one of the two, foreign attributes by category, VIN format', async () => {
    const one = 'Provide exactly one of vehicle or foreign_vehicle';
    await refused({}, one);
    await refused({ vehicle: '100000001', foreign_vehicle: FR_CAR }, one);
    expect((await quote({ vehicle: '999999999' })).status).toBe(404);
    await refused(
      { foreign_vehicle: { registration_country: 'MD', category: 'M1' } },
      'foreign_vehicle.registration_country must not be MD',
    );
    await refused(
      { foreign_vehicle: { registration_country: 'PL', category: 'N1' } },
      'foreign_vehicle.max_authorized_mass is required for category N1',
    );
    await refused(
      { foreign_vehicle: { registration_country: 'PL', category: 'O2' } },
      'foreign_vehicle.max_authorized_mass is required for category O2',
    );
    await refused(
      { foreign_vehicle: { registration_country: 'PL', category: 'M2' } },
      'foreign_vehicle.places is required for category M2',
    );
    expect(await offers({ foreign_vehicle: { registration_country: 'PL', category: 'L' } })).toEqual([]);

    const item = { foreign_vehicle: FR_CAR, start_date: '2026-09-21', duration: 10, category: 'A' };
    await orderRefused(
      { ...item, foreign_vehicle: { ...FR_CAR, category: 'N1', registration_country: 'IT' }, category: 'B' },
      'foreign_vehicle.max_authorized_mass is required for category N1',
    );
    await orderRefused(
      { ...item, vehicle: '100000001' },
      'Provide exactly one of vehicle or foreign_vehicle',
    );
    for (const vin of ['VF1RFB00X5600000I', 'VF1RFB00X5600000', 'VF1RFB00X56000O01']) {
      const bad = await order({ ...item, foreign_vehicle: { ...FR_CAR, vin } });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('foreign_vehicle/vin');
    }
    const { vin: _vin, ...noVin } = FR_CAR;
    expect((await order({ ...item, foreign_vehicle: noVin })).status).toBe(400);
    const { plate_number: _p, ...noPlate } = FR_CAR;
    expect((await order({ ...item, foreign_vehicle: noPlate })).status).toBe(400);
    const ok = await order(item);
    expect(ok.body.description).toBe('Rovinieta, 10 zile, Categoria A, AB123CD');
    const named = await order({ ...item, foreign_vehicle: { ...FR_CAR, make: 'Renault', model: 'Clio' } });
    expect(named.body.description).toBe('Rovinieta, 10 zile, Categoria A, RENAULT CLIO AB123CD');
  });

  it('shows the active vignette of 100000009 and starts the offers the day after it ends', async () => {
    const os = await offers({ vehicle: '100000009' });
    expect(os[0]).toMatchObject({
      message:
        'Pentru vehicul categorie A nr.inmatriculare ACT009, exista rovinieta activa in perioada 27.08.2026 - 25.09.2026',
      min_start_date: '2026-09-26',
    });
    // Found by VIN for a vehicle described as foreign, too.
    const byVin = await offers({
      foreign_vehicle: { registration_country: 'RO', category: 'M1', vin: 'TMBJG7NE0K0000009' },
    });
    expect(byVin[0]!.min_start_date).toBe('2026-09-26');
    expect(
      (await offers({ foreign_vehicle: { registration_country: 'RO', category: 'M1' } }))[0]!.message,
    ).toBe('');
    await orderRefused(
      { vehicle: '100000009', start_date: '2026-09-25', duration: 10, category: 'A' },
      'start_date must be between 2026-09-26 and 2026-10-26',
    );
  });
});

describe('from 25 September 2026: only E0 and EC are sold, a valid class is ignored', () => {
  beforeAll(() => h.setClock(RESTRICTED));

  it('accepts and ignores a valid class, raising neither declaration nor year errors', async () => {
    const plain = await offers({ vehicle: '100000003' });
    expect(plain[0]).not.toHaveProperty('emission_class');
    expect(await offers({ vehicle: '100000003', emission_class: 'E6' })).toEqual(plain);
    expect(
      await offers({ vehicle: '100000003', emission_class: 'e4', emission_proof_declared: false }),
    ).toEqual(plain);
    await refused({ vehicle: '100000003', emission_class: 'E7' }, 'Invalid emission_class');
    expect(await offers({ foreign_vehicle: FR_CAR, emission_class: 'EC' })).toHaveLength(5);
    const ok = await order({
      vehicle: '100000003',
      start_date: '2026-09-28',
      duration: 30,
      category: 'A',
      emission_class: 'E6',
    });
    expect(ok.status).toBe(200);
    await orderRefused(
      {
        vehicle: '100000003',
        start_date: '2026-09-28',
        duration: 30,
        category: 'A',
        emission_class: 'EURO6',
      },
      'Invalid emission_class',
    );
  });

  it('still uses the old categories and durations until the switch', async () => {
    expect(grid(await offers({ vehicle: '100000007' }))).toEqual(['G1', 'G7', 'G30', 'G365']);
    expect(grid(await offers({ vehicle: '100000006' }))).toContain('E7');
    expect(grid(await offers({ vehicle: '100000004' }))).toHaveLength(5);
  });
});

describe('from 1 October 2026: categories A–D, price per class, VIN required', () => {
  beforeAll(() => h.setClock(NEW));

  it('quotes A with the new durations, priced and labelled for the class actually sold', async () => {
    const os = await offers({ vehicle: '100000001', emission_class: 'E6', emission_proof_declared: true });
    expect(grid(os)).toEqual(['A1', 'A10', 'A30', 'A60', 'A365']);
    expect(os[1]).toEqual({
      product: 'vignette:ro',
      name: '10 zile, (A-Autoturisme), HONDA CIVIC CHY999',
      category: 'A',
      duration: 10,
      external_category: 'M1',
      emission_class: 'E0',
      // E0 10 days 7.20 EUR × 4.9770 = 35.83 RON; × 4.6302 = 165.90 MDL
      price: 165.9,
      currency: 'MDL',
      reference_price: '35.83 RON',
      reference_exchange_rate: '1 RON 4.6302 MDL',
      min_start_date: '2026-10-05',
      max_interval: 30,
      message: '',
    });
  });

  it('quotes EC for a registry-electric vehicle (cheapest) and E0 for every foreign vehicle', async () => {
    const ev = await offers({ vehicle: '100000002', emission_class: 'E3' });
    expect(ev.map((o) => o.emission_class)).toEqual(['EC', 'EC', 'EC', 'EC', 'EC']);
    const car = await offers({ vehicle: '100000001' });
    for (const [i, o] of ev.entries()) expect(o.price).toBeLessThan(car[i]!.price);
    const foreign = await offers({
      foreign_vehicle: FR_CAR,
      emission_class: 'EC',
      emission_proof_declared: true,
    });
    expect(foreign.map((o) => o.emission_class)).toEqual(['E0', 'E0', 'E0', 'E0', 'E0']);
    expect(foreign.map((o) => o.price)).toEqual(car.map((o) => o.price));
    // Declaration and year errors stay off while only E0/EC are sold; unknown codes still fail.
    expect((await offers({ vehicle: '100000003', emission_class: 'E6' }))[0]!.emission_class).toBe('E0');
    await refused({ vehicle: '100000002', emission_class: 'E10' }, 'Invalid emission_class');
  });

  it('uses the new categories: B ≤ 3.5 t, C 9–23 seats, D > 23 seats, none for goods over 3.5 t', async () => {
    expect(grid(await offers({ vehicle: '100000005' }))).toEqual(['B1', 'B10', 'B30', 'B60', 'B365']);
    const c = await offers({ vehicle: '100000007' });
    expect(grid(c)).toEqual(['C1', 'C10', 'C30', 'C60', 'C365']);
    expect(c[0]!.name).toBe('1 zile, (C-Persoane, 9-23 locuri), MERCEDES-BENZ SPRINTER BUS007');
    expect(grid(await offers({ vehicle: '100000008' }))).toEqual(['D1', 'D10', 'D30', 'D60', 'D365']);
    expect(await offers({ vehicle: '100000006' })).toEqual([]);
    expect(await offers({ foreign_vehicle: DE_TRUCK })).toEqual([]);
    expect(
      grid(await offers({ foreign_vehicle: { registration_country: 'AT', category: 'M3', places: 40 } })),
    ).toContain('D60');
  });

  it('refuses durations and categories without an offer, and goods over 3.5 t, on create-order', async () => {
    const base = { vehicle: '100000001', start_date: '2026-10-06', duration: 10, category: 'A' };
    await orderRefused({ ...base, duration: 7 }, 'No Vignette found.');
    await orderRefused({ ...base, duration: 90 }, 'No Vignette found.');
    await orderRefused({ ...base, category: 'E' }, 'No Vignette found.');
    await orderRefused({ ...base, vehicle: '100000007', category: 'G', duration: 7 }, 'No Vignette found.');
    await orderRefused({ ...base, vehicle: '100000006', category: 'E', duration: 30 }, 'No Vignette found.');
    await orderRefused({ ...base, vehicle: '100000006', category: 'B' }, 'No Vignette found.');
    const bus = await order({ ...base, vehicle: '100000007', category: 'C', duration: 60 });
    expect(bus.body.description).toBe('Rovinieta, 60 zile, Categoria C, MERCEDES-BENZ SPRINTER BUS007');
  });

  it('refuses an MD vehicle without a VIN in the registry (100000004)', async () => {
    const res = await quote({ vehicle: '100000004' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: NO_VIN, message: NO_VIN });
    await orderRefused(
      { vehicle: '100000004', start_date: '2026-10-05', duration: 10, category: 'A' },
      NO_VIN,
    );
  });

  it('keeps the active-vignette message moving with the clock', async () => {
    const os = await offers({ vehicle: '100000009' });
    expect(os[0]!.message).toBe(
      'Pentru vehicul categorie A nr.inmatriculare ACT009, exista rovinieta activa in perioada 11.09.2026 - 10.10.2026',
    );
    expect(os[0]!.min_start_date).toBe('2026-10-11');
  });
});

describe('the published contract', () => {
  it('describes the vignette:ro request fields in the OpenAPI document', async () => {
    const res = await h.service.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    for (const s of ['vignette:ro', 'emission_proof_declared', 'max_authorized_mass', 'external_category'])
      expect(res.body).toContain(s);
  });
});

describe('selling more classes later is configuration (declared_classes_sold)', () => {
  const car: RoVehicle = { md: true, euCategory: 'M1', year: 2001, electric: false };
  const restricted = { restricted: true, newTariff: true };

  it('honours a declared class listed as sold, with its declaration and year rules', () => {
    expect(resolveEmissionClass({ emission_class: 'E3' }, car, restricted, [])).toBe('E0');
    expect(
      resolveEmissionClass({ emission_class: 'E3', emission_proof_declared: true }, car, restricted, ['E3']),
    ).toBe('E3');
    expect(() => resolveEmissionClass({ emission_class: 'E3' }, car, restricted, ['E3'])).toThrow(
      'emission_class requires emission_proof_declared',
    );
    expect(() =>
      resolveEmissionClass({ emission_class: 'E6', emission_proof_declared: true }, car, restricted, ['E6']),
    ).toThrow('Emission class E6 requires a vehicle manufactured in 2011 or later');
  });
});
