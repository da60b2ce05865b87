import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { guideExamples as examples, guideProducts } from '../support/readme.ts';

/**
 * Every example request the partner guide shows must work, and answer what the guide says it answers:
 * each get-offers body answers offers carrying the fields of the products table's "offers carry"
 * column, priced in MDL; each create-order body answers a draft shaped as the guide shows it
 * (`{"id":"IAI123456ABC","status":"draft",…,"price":1512,"currency":"MDL"}`), with the fields the
 * table says the answer has. On the day the guide's dates are written for; prices are not
 * compared, as they follow the tariffs.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock('2026-11-21T10:00:00+02:00');
});
afterAll(() => h?.close());

const products = guideProducts();
const documented = (product: string) => {
  const p = products.get(product);
  if (!p) throw new Error(`the partner guide's products table has no row for ${product}`);
  return p;
};
type Offer = Record<string, unknown>;

describe('partner guide examples', () => {
  it('cover every product of the table', () => {
    const quoted = examples('get-offers').map((b) => (JSON.parse(b) as { product: string }).product);
    expect(quoted.sort()).toEqual([...products.keys()].sort());
  });

  it.each(examples('get-offers'))('get-offers %s', async (body) => {
    const { product } = JSON.parse(body) as { product: string };
    const { offerFields, keyed } = documented(product);
    const res = await h.call<{ offers: Offer[] | Record<string, Offer[]> }>('get-offers', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { offers } = res.body;
    // medical: offers keyed by insured amount, each amount a list of insurers' offers.
    const list = keyed ? Object.values(offers as Record<string, Offer[]>).flat() : (offers as Offer[]);
    expect(Array.isArray(offers)).toBe(!keyed);
    expect(list.length).toBeGreaterThan(0);
    for (const offer of list) {
      for (const field of offerFields) expect(offer, `${product} offer field ${field}`).toHaveProperty(field);
      if (keyed) continue;
      // "All prices are final MDL prices".
      expect(offer).toMatchObject({ product, price: expect.any(Number), currency: 'MDL' });
      expect(offer.price).toBeGreaterThan(0);
    }
  });

  it.each(examples('create-order'))('create-order %s', async (body) => {
    const request = JSON.parse(body) as { products: { product: string; start_date?: string }[] };
    const res = await h.call('create-order', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[A-Z]{3}\d{6}[A-Z]{3}$/), // the form of the guide's IAI123456ABC
      status: 'draft',
      description: expect.any(String),
      price: expect.any(Number),
      currency: 'MDL',
    });
    expect(res.body.price).toBeGreaterThan(0);
    expect(res.body.description).not.toBe('');
    const [item] = request.products;
    for (const field of documented(item!.product).orderFields) {
      expect(res.body, `${item!.product} answer field ${field}`).toHaveProperty(field);
      if (field.endsWith('_date')) expect(res.body[field]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    if (item!.start_date && 'start_date' in res.body) expect(res.body.start_date).toBe(item!.start_date);
  });
});
