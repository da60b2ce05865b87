import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payment, RCA_QUOTE, rcaItem, startHarness, type Harness } from '../support/harness.ts';
import { extractPdfText } from '../support/pdf-text.ts';

const NOW = '2026-11-21T10:00:00+02:00';
const PAID_AT = Date.parse(NOW) + 60_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock(NOW);
});
afterAll(() => h?.close());

describe('RCA from quote to policy PDF', () => {
  it('quotes, orders, confirms and completes with every issued field and a downloadable PDF', async () => {
    const quote = await h.call<{ offers: Record<string, unknown>[] }>('get-offers', RCA_QUOTE);
    expect(quote.status).toBe(200);
    expect(quote.body.offers.length).toBeGreaterThan(1);
    const offer = quote.body.offers[0]!;
    expect(Object.keys(offer).sort()).toEqual(
      [
        'company',
        'currency',
        'duration',
        'max_interval',
        'min_start_date',
        'name',
        'price',
        'product',
      ].sort(),
    );
    expect(offer).toMatchObject({ product: 'rca', duration: 365, currency: 'MDL' });
    // 100000001 (1.8 l petrol, owner in Chișinău), idnx 2003000000016 (bonus-malus 1.00), demo partner
    // without margin: base premium × 1.20 (engine) × 1.20 (zone) × 1.00, from catalogue/rca.json.
    expect(quote.body.offers.map((o) => [o.company, o.price, o.min_start_date, o.max_interval])).toEqual([
      ['moldasig', 1512, '2026-11-21', 180], // 1050.00 × 1.44
      ['donaris', 1612.8, '2026-11-21', 180], // 1120.00 × 1.44
      ['grawe', 1699.2, '2026-11-21', 180], // 1180.00 × 1.44
      ['general', 1454.4, '2026-11-21', 180], // 1010.00 × 1.44
    ]);

    const created = await h.call('create-order', {
      customer: { phone: '+37369123456', name: 'Ștefan Țurcanu' },
      products: [rcaItem(offer.min_start_date as string, { insurance_company: offer.company })],
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^IAI\d{6}[A-Z]{3}$/),
      status: 'draft',
      description: 'Asigurare RCA, HONDA CIVIC CHY999',
      price: offer.price,
      currency: 'MDL',
    });
    const id = created.body.id as string;

    const confirmed = await h.call('confirm-order', {
      id,
      payment: payment(offer.price as number, { paid_at: PAID_AT }),
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({
      id,
      status: 'paid',
      description: 'Asigurare RCA, HONDA CIVIC CHY999',
      start_date: '2026-11-21',
      end_date: '2027-11-20',
      price: 1512,
      currency: 'MDL',
    });

    const done = await h.waitForStatus(id, 'completed');
    const products = done.body.products as Record<string, unknown>[];
    expect(products).toHaveLength(1);
    const issued = products[0]!;
    expect(issued).toEqual({
      product: 'rca',
      plate_number: 'CHY999',
      car_model: 'HONDA CIVIC',
      reference_price: '1512.00 MDL',
      reference_exchange_rate: '1 MDL 1.0000 MDL',
      price: offer.price,
      currency: 'MDL',
      file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
    });

    const pdf = await h.service.app.inject({ method: 'GET', url: new URL(issued.file as string).pathname });
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const text = await extractPdfText(pdf.rawPayload);
    for (const s of ['CHY999', 'HONDA CIVIC', id, 'Ștefan Țurcanu', '+37369123456', 'Demo Partner'])
      expect(text).toContain(s);
    // Stored as the PDF writer deflated it, out of line: PostgreSQL does not run pglz over it (migration 12).
    const { rows } = await sql<{ storage: string; stored: number }>`
      select (select attstorage from pg_attribute
              where attrelid = 'documents'::regclass and attname = 'pdf') as storage,
             pg_column_size(pdf) as stored
      from documents where order_id = ${id}`.execute(h.service.svc.db);
    expect(rows).toEqual([{ storage: 'e', stored: pdf.rawPayload.length }]);
  });

  it('fails the order when the provider refuses the vehicle (100000010)', async () => {
    const quote = await h.call<{ offers: { price: number; min_start_date: string }[] }>('get-offers', {
      ...RCA_QUOTE,
      vehicle: '100000010',
    });
    const offer = quote.body.offers[0]!;
    const created = await h.call('create-order', {
      customer: { phone: '1' },
      products: [rcaItem(offer.min_start_date, { vehicle: '100000010' })],
    });
    const id = created.body.id as string;
    expect(
      (await h.call('confirm-order', { id, payment: payment(offer.price, { paid_at: PAID_AT }) })).status,
    ).toBe(200);
    const failed = await h.waitForStatus(id, 'failed');
    expect(failed.body.products).toBeUndefined();
    // Why, for a person; a customer payment stays failed until the operator's refund.
    expect(failed.body.failure_reason).toBe(
      'The provider refused to issue the policy: the rca provider refused the vehicle (sandbox test vehicle).',
    );
    // The operator's order view (and the console's order page) says the same.
    expect((await h.admin('GET', `/admin/orders/${id}`)).body.failure_reason).toBe(
      failed.body.failure_reason,
    );
    const refunded = await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'partner repaid' });
    expect(refunded.status).toBe(200);
    const after = await h.call('get-order', { id });
    expect(after.body).toMatchObject({ status: 'refunded', failure_reason: failed.body.failure_reason });
  });
});
