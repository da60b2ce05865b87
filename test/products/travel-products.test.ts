import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Creds, Harness } from '../support/harness.ts';
import {
  completeAndDownload as complete,
  harnessWithPartner,
  storedOrders as stored,
} from '../support/orders.ts';

/** medical and baggage from quote to policy PDF, what each refuses, and a green-card + medical order. */
const NOW = '2026-11-21T10:00:00+02:00';
const PAID_AT = Date.parse(NOW) + 60_000;

let h: Harness;
let partner: Creds;
// A 2.5 % margin: every price below shows the margin on top of the tariff.
beforeAll(async () => ({ h, partner } = await harnessWithPartner(NOW, 'Travel Partner', 250)));
afterAll(() => h?.close());

const storedOrders = () => stored(h, partner);
const completeAndDownload = (id: string, price: number) => complete(h, partner, id, price, PAID_AT);

type Body = Record<string, unknown>;
const quote = <T = Body>(body: Body) => h.call<T & { error?: string }>('get-offers', body, partner);
const create = (...products: Body[]) =>
  h.call('create-order', { customer: { phone: '+37369000222', name: 'Elena Munteanu' }, products }, partner);
async function expectRefusals(
  send: (b: Body) => Promise<{ status: number; body: Body }>,
  field: 'error' | 'message',
  cases: [Body, number, RegExp][],
) {
  for (const [body, status, reason] of cases) {
    const res = await send(body);
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(res.body[field], JSON.stringify(body)).toMatch(reason);
  }
}

interface CompanyOffer {
  region: string;
  companyId: number;
  companyName: string;
  tariff: number;
  coverage: { text: string; status: string }[];
  terms: string;
  priceMDL: number;
}
type MedicalQuote = { product: string; offers: Record<string, CompanyOffer[]> } & Body;

const MED_QUOTE = {
  product: 'medical',
  covered_territories: ['DEU', 'FRA'],
  persons: ['1990-05-10', '2015-03-01'],
  start_date: '2026-12-01',
  end_date: '2026-12-10',
  is_multiple_type: false,
  include_additional_risk: false,
  activity: 'TRVL',
};
const person = (over: Body = {}) => ({
  first_name: 'Elena',
  last_name: 'Munteanu',
  birthday: '1990-05-10',
  address: 'str. Ștefan cel Mare 1, Chișinău',
  passport: 'AB1234567',
  idnp: '2005123456783',
  ...over,
});
const medItem = (over: Body = {}) => ({
  ...MED_QUOTE,
  persons: [
    person(),
    person({ first_name: 'Andrei', birthday: '2015-03-01', idnp: '0990123456780', passport: 'AB7654321' }),
  ],
  amount: '30000',
  company_name: 'Donaris VIG',
  contractor: {
    type: 'individual',
    first_name: 'Elena',
    last_name: 'Munteanu',
    birthday: '1990-05-10',
    passport: 'AB1234567',
    idnx: '2005123456783',
    address: 'str. Ștefan cel Mare 1, Chișinău',
  },
  ...over,
});

describe('medical', () => {
  it('quotes offers keyed by insured amount, priced by age, days and region', async () => {
    const res = await quote<MedicalQuote>(MED_QUOTE);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['max_interval', 'min_start_date', 'offers', 'product', 'reference_exchange_rate'].sort(),
    );
    expect(res.body).toMatchObject({
      product: 'medical',
      // One rate text form for every product (decision 0043).
      reference_exchange_rate: '1 EUR 19.3033 MDL',
      max_interval: 365,
      min_start_date: '2026-11-21',
    });
    expect(Object.keys(res.body.offers)).toEqual(['10000', '30000', '50000']);
    const donaris = res.body.offers['30000']!.find((o) => o.companyName === 'Donaris VIG')!;
    // 10 days × 0.60 EUR: 6.00 (adult) + 4.80 (child, ×0.80) = 10.80 EUR = 208.48 MDL; + 2.5 % = 213.69.
    expect(donaris).toEqual({
      region: 'Europa',
      companyId: 1,
      companyName: 'Donaris VIG',
      tariff: 10.8,
      coverage: expect.arrayContaining([
        { text: expect.stringContaining('Riscuri suplimentare'), status: 'excluded' },
        { text: expect.any(String), status: 'included' },
      ]),
      terms: expect.stringMatching(/^https:\/\/.+\.pdf$/),
      priceMDL: 213.69,
    });
    expect(res.body.offers['30000']!.length).toBeGreaterThan(1);
  });

  it('prices older travellers, risky activities, the additional risk and wider regions higher', async () => {
    const price = async (over: Body) =>
      (await quote<MedicalQuote>({ ...MED_QUOTE, ...over })).body.offers['30000']![0]!.priceMDL;
    const base = await price({});
    expect(await price({ persons: ['1950-01-01', '2015-03-01'] })).toBeGreaterThan(base);
    expect(await price({ activity: 'SKI' })).toBeGreaterThan(base);
    expect(await price({ include_additional_risk: true })).toBeGreaterThan(base);
    expect(await price({ covered_territories: ['WORLD'] })).toBeGreaterThan(base);
    expect(await price({ covered_territories: ['DEU', 'USA'] })).toBeGreaterThan(
      await price({ covered_territories: ['WORLD'] }),
    );
    expect(await price({ end_date: '2026-12-20' })).toBeGreaterThan(base);
    const world = await quote<MedicalQuote>({ ...MED_QUOTE, covered_territories: ['THA'] });
    expect(world.body.offers['30000']![0]!.region).toBe(
      'Toată lumea (Excepție: SUA, Canada, Japonia, Australia)',
    );
    const withRisk = await quote<MedicalQuote>({ ...MED_QUOTE, include_additional_risk: true });
    expect(withRisk.body.offers['30000']![0]!.coverage.at(-1)!.status).toBe('included');
  });

  it('quotes and orders multiple trips by availability months and insured days', async () => {
    const multi = { is_multiple_type: true, availability: 6, insured_days: 30, end_date: undefined };
    const q = await quote<MedicalQuote>({ ...MED_QUOTE, ...multi });
    expect(q.status).toBe(200);
    const offer = q.body.offers['30000']!.find((o) => o.companyName === 'Donaris VIG')!;
    const created = await create(medItem(multi));
    expect(created.status).toBe(200);
    expect(created.body.price).toBe(offer.priceMDL);
  });

  it('goes from order to a completed policy with every issued field and a PDF', async () => {
    const offer = (await quote<MedicalQuote>(MED_QUOTE)).body.offers['30000']!.find(
      (o) => o.companyName === 'Donaris VIG',
    )!;
    const created = await create(medItem());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^IAM\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Asigurare Medicala pentru calatorii',
      price: offer.priceMDL,
      currency: 'MDL',
    });
    const { order, products, pdfs } = await completeAndDownload(created.body.id as string, offer.priceMDL);
    expect(order).toMatchObject({ start_date: '2026-12-01', end_date: '2026-12-10' });
    expect(products).toEqual([
      {
        product: 'medical',
        start_date: '2026-12-01',
        end_date: '2026-12-10',
        region: 'Europa',
        insurance_company: 'Donaris VIG',
        reference_price: '10.80 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        insured_amount: '30000 EUR',
        file: expect.any(String),
      },
    ]);
    for (const s of [
      'Elena Munteanu',
      'Andrei Munteanu',
      '01.12.2026',
      '10.12.2026',
      '213.69 MDL',
      '30000 EUR',
      'Turism (TRVL)',
    ])
      expect(pdfs[0]).toContain(s);
  });

  it('accepts a company contractor named by fullName or full_name', async () => {
    for (const key of ['fullName', 'full_name']) {
      const contractor = {
        type: 'company',
        idnx: '1021600002204',
        address: 'Chișinău',
        [key]: 'Trans Cargo SRL',
      };
      const res = await create(medItem({ contractor }));
      expect(res.status, key).toBe(200);
    }
  });

  it('refuses bad quotes with 400', async () => {
    await expectRefusals(quote, 'error', [
      [{ ...MED_QUOTE, activity: 'SWIM' }, 400, /activity/],
      [{ ...MED_QUOTE, persons: [] }, 400, /persons/],
      [{ ...MED_QUOTE, persons: ['10.05.1990'] }, 400, /persons/],
      [{ ...MED_QUOTE, covered_territories: ['europe'] }, 400, /covered_territories/],
      [{ ...MED_QUOTE, is_multiple_type: 'no' }, 400, /is_multiple_type/],
      [{ ...MED_QUOTE, include_additional_risk: undefined }, 400, /include_additional_risk/],
      [{ ...MED_QUOTE, end_date: undefined }, 400, /^end_date is required for a single trip/],
      [{ ...MED_QUOTE, end_date: '2026-11-30' }, 400, /end_date must not be before start_date/],
      [{ ...MED_QUOTE, is_multiple_type: true }, 400, /availability and insured_days are required/],
      [{ ...MED_QUOTE, is_multiple_type: true, availability: 5, insured_days: 30 }, 400, /3, 6, 12 months/],
      [{ ...MED_QUOTE, is_multiple_type: true, availability: 3, insured_days: 120 }, 400, /insured_days/],
      [{ ...MED_QUOTE, covered_territories: ['XYZ'] }, 400, /unknown territory XYZ/],
      [{ ...MED_QUOTE, covered_territories: ['MDA'] }, 400, /MDA/],
      [
        { ...MED_QUOTE, start_date: '2026-11-20' },
        400,
        /start_date must be between 2026-11-21 and 2027-11-21/,
      ],
      [{ ...MED_QUOTE, persons: ['1930-01-01'] }, 400, /older than 84/],
      [{ ...MED_QUOTE, persons: ['2027-01-01'] }, 400, /after start_date/],
    ]);
  });

  it('refuses bad orders with 400 (schema) or 500 [API] and stores nothing', async () => {
    const before = await storedOrders();
    const company = {
      type: 'company',
      idnx: '1021600002204',
      address: 'Chișinău',
      fullName: 'Trans Cargo SRL',
    };
    await expectRefusals((item) => create(item), 'message', [
      [medItem({ contractor: undefined }), 400, /contractor/],
      [medItem({ contractor: { ...company, fullName: undefined } }), 400, /fullName/],
      [medItem({ contractor: { ...company, type: 'other' } }), 400, /type/],
      [medItem({ persons: [person({ idnp: undefined })] }), 400, /idnp/],
      [medItem({ amount: 30000 }), 400, /amount/],
      [
        medItem({ persons: [person({ idnp: '2005123456784' })] }),
        500,
        /^\[API\] persons\[0\]\.idnp has an invalid/,
      ],
      [
        medItem({ persons: [person({ idnp: '1021600002204' })] }),
        500,
        /^\[API\] persons\[0\]\.idnp must be an IDNP/,
      ],
      [medItem({ contractor: { ...company, idnx: '2005123456783' } }), 500, /company must be an IDNO/],
      [medItem({ amount: '20000' }), 500, /^\[API\] amount 20000 is not offered for Europa/],
      [medItem({ company_name: 'Nobody' }), 500, /^\[API\] Unknown company_name Nobody$/],
      [medItem({ end_date: undefined }), 500, /^\[API\] end_date is required for a single trip/],
      [medItem({ is_multiple_type: true }), 500, /^\[API\] availability and insured_days are required/],
      [medItem({ start_date: '2027-11-22', end_date: '2027-11-30' }), 500, /^\[API\] start_date must be/],
    ]);
    expect(await storedOrders()).toEqual(before);
  });
});

type Offer = Body & { price: number; company: string };
const bagItem = (over: Body = {}) => ({
  product: 'baggage',
  start_date: '2026-12-01',
  flight_numbers: ['fr1234', '9U 123'],
  baggage_pcs: 2,
  idnp: '2005123456783',
  contractor_full_name: 'Elena Munteanu',
  insurance_company: 'moldasig',
  ...over,
});

describe('baggage', () => {
  it('quotes per piece per insurer', async () => {
    const res = await quote<{ offers: Offer[] }>({ product: 'baggage', baggage_pcs: 2 });
    expect(res.status).toBe(200);
    // 2 × 3.50 EUR = 7.00 EUR = 135.12 MDL; + 2.5 % = 138.50.
    expect(res.body.offers[0]).toEqual({
      product: 'baggage',
      name: 'Asigurare bagaje, 2 bagaje, Moldasig',
      company: 'moldasig',
      price: 138.5,
      currency: 'MDL',
      reference_price: '7.00 EUR',
      reference_exchange_rate: '1 EUR 19.3033 MDL',
      min_start_date: '2026-11-21',
      max_interval: 365,
    });
    expect(res.body.offers.length).toBeGreaterThan(1);
  });

  it('goes from order to a completed policy with every issued field and a PDF', async () => {
    const created = await create(bagItem());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^IAO\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Asigurare bagaje, 2 bagaje, zbor FR1234, 9U123',
      price: 138.5,
      currency: 'MDL',
    });
    const { products, pdfs } = await completeAndDownload(created.body.id as string, 138.5);
    expect(products).toEqual([
      {
        product: 'baggage',
        reference_price: '7.00 EUR',
        reference_exchange_rate: '1 EUR 19.3033 MDL',
        price: 138.5,
        currency: 'MDL',
        flight_numbers: ['FR1234', '9U123'],
        baggage_pcs: 2,
        idnp: '2005123456783',
        contractor_full_name: 'Elena Munteanu',
        insurance_company: 'moldasig',
        file: expect.any(String),
      },
    ]);
    for (const s of ['Elena Munteanu', 'FR1234', '01.12.2026', '138.50 MDL', 'Moldasig'])
      expect(pdfs[0]).toContain(s);
  });

  it('refuses bad quotes and orders and stores nothing', async () => {
    await expectRefusals(quote, 'error', [
      [{ product: 'baggage' }, 400, /baggage_pcs/],
      [{ product: 'baggage', baggage_pcs: 0 }, 400, /baggage_pcs/],
      [{ product: 'baggage', baggage_pcs: 6 }, 400, /baggage_pcs/],
      [{ product: 'baggage', baggage_pcs: '2' }, 400, /baggage_pcs/],
    ]);
    const before = await storedOrders();
    await expectRefusals((item) => create(item), 'message', [
      [bagItem({ flight_numbers: [] }), 400, /flight_numbers/],
      [bagItem({ flight_numbers: ['not a flight'] }), 400, /flight_numbers/],
      [bagItem({ flight_numbers: ['FR1', 'FR1'] }), 400, /flight_numbers/],
      [bagItem({ contractor_full_name: undefined }), 400, /contractor_full_name/],
      [bagItem({ baggage_pcs: 9 }), 400, /baggage_pcs/],
      [bagItem({ idnp: '2005123456784' }), 500, /^\[API\] idnp has an invalid check digit$/],
      [bagItem({ idnp: '1021600002204' }), 500, /^\[API\] idnp must be an IDNP/],
      [bagItem({ insurance_company: 'nobody' }), 500, /^\[API\] Unknown insurance_company nobody$/],
      [
        bagItem({ start_date: '2026-11-20' }),
        500,
        /^\[API\] start_date must be between 2026-11-21 and 2027-11-21$/,
      ],
    ]);
    expect(await storedOrders()).toEqual(before);
  });
});

describe('an order of several products', () => {
  it('prices green-card + medical as the sum and completes with one products[] entry each', async () => {
    const gcQuote = {
      product: 'green-card',
      region: 'EU',
      duration: 15,
      vehicle: '100000001',
      idnx: '2003000000016',
    };
    const gc = (await quote<{ offers: Offer[] }>(gcQuote)).body.offers.find((o) => o.company === 'grawe')!;
    const med = (await quote<MedicalQuote>(MED_QUOTE)).body.offers['30000']!.find(
      (o) => o.companyName === 'Donaris VIG',
    )!;
    const greenCard = {
      product: 'green-card',
      vehicle: '100000001',
      start_date: '2026-12-01',
      duration: 15,
      region: 'EU',
      insurance_company: 'grawe',
      idnx: '2003000000016',
    };
    const created = await create(greenCard, medItem());
    expect(created.status).toBe(200);
    const total = Math.round((gc.price + med.priceMDL) * 100) / 100;
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^IAE/), price: total });
    const { order, products, pdfs } = await completeAndDownload(created.body.id as string, total);
    expect(order).toMatchObject({ start_date: '2026-12-01', end_date: '2026-12-15', price: total });
    expect(products.map((p) => p.product)).toEqual(['green-card', 'medical']);
    expect(products[0]).toMatchObject({ plate_number: 'CHY999', validity: 15, price: gc.price });
    expect(products[1]).toMatchObject({ insurance_company: 'Donaris VIG', insured_amount: '30000 EUR' });
    expect(pdfs[0]).toContain('CHY999');
    expect(pdfs[1]).toContain('Andrei Munteanu');
  });
});
