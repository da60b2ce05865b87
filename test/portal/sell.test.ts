import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { productExamples } from '../../src/http/openapi-examples.ts';
import { PRODUCT_MODULES } from '../../src/products/registry.ts';
import { valuesOf } from '../../src/portal/schema-form.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { get, portalUser, post, type Signed } from './support.ts';

/**
 * The sales desk over HTTP, as a browser without JavaScript uses it: every product's form holds
 * every field of its get-offers schema, and a valid submission of each gets offers; a chosen offer
 * leads to the create-order form, and a valid one to a draft (docs/decisions/0060-sales-desk-forms-from-schemas.md).
 */
let h: Harness;
let cashier: Signed;

beforeAll(async () => {
  h = await startHarness();
  const partner = await h.newPartner({ name: 'Benzinăria Sud' });
  cashier = await portalUser(h, partner.id, 'cashier');
});
afterAll(async () => h?.close());

/** The form fields of a request, as its form would send them. */
export function formOf(request: Record<string, unknown>): Record<string, string | string[]> {
  const { product: _product, ...rest } = request;
  const { values, rows } = valuesOf(rest);
  const fields: Record<string, string | string[]> = {};
  for (const [k, v] of values) fields[`f.${k}`] = v;
  for (const [k, n] of rows) fields[`_rows.${k}`] = String(n);
  return fields;
}

/** Every property path of an object schema, arrays' rows numbered from 0. */
function leafNames(schema: { properties?: Record<string, unknown> }, prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, s]) => {
    const child = s as {
      type?: string;
      properties?: Record<string, unknown>;
      items?: { type?: string; properties?: Record<string, unknown>; enum?: unknown[] };
    };
    if (child.type === 'object') return leafNames(child, `${prefix}${name}.`);
    if (child.type === 'array' && child.items?.type === 'object')
      return leafNames(child.items, `${prefix}${name}.0.`);
    return [`${prefix}${name}`];
  });
}

const hidden = (body: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`)
    .exec(body)?.[1]
    ?.replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&')
    .replaceAll('&#39;', "'");

describe('every product’s form', () => {
  for (const m of PRODUCT_MODULES) {
    it(`${m.product}: holds every get-offers field, gets offers, and creates a draft`, async () => {
      const page = await get(h, `/portal/sell?product=${encodeURIComponent(m.product)}`, cashier.cookie);
      expect(page.statusCode).toBe(200);
      for (const name of leafNames(m.schemas.quote)) {
        const arrayOfScalars = /\.0$/.test(name);
        expect(page.body, name).toMatch(new RegExp(`name="f\\.${name.replaceAll('.', '\\.')}(\\.0)?"`));
        void arrayOfScalars;
      }
      const ex = productExamples(localDate(await h.service.svc.clock.now()))[m.product];
      const offers = await post(h, '/portal/sell/offers', cashier.cookie, {
        product: m.product,
        ...formOf(ex.quote),
      });
      expect(offers.statusCode, offers.body).toBe(200);
      expect(offers.body).toContain('<h1>Offers</h1>');
      expect(offers.body).toContain('>Choose</button>');

      const quote = hidden(offers.body, 'quote')!;
      const offer = hidden(offers.body, 'offer')!;
      const form = await post(h, '/portal/sell/order', cashier.cookie, { product: m.product, quote, offer });
      expect(form.statusCode, form.body).toBe(200);
      const token = hidden(form.body, 'token')!;
      const example = (ex.order as { products: Record<string, unknown>[] }).products[0]!;
      const created = await post(h, '/portal/sell/orders', cashier.cookie, {
        product: m.product,
        quote,
        offer,
        token,
        ...formOf(example),
        'c.name': 'Ion Popescu',
        'c.phone': '+37369000111',
      });
      expect(created.statusCode, created.body.slice(created.body.indexOf('<main'))).toBe(303);
      expect(created.headers.location).toMatch(/^\/portal\/sell\/orders\/[A-Z]{3}/);
      const draft = await get(h, created.headers.location as string, cashier.cookie);
      expect(draft.statusCode).toBe(200);
      expect(draft.body).toContain('Record payment');
    });
  }
});
