import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { productExamples } from '../../src/http/openapi-examples.ts';
import { PRODUCT_MODULES } from '../../src/products/registry.ts';
import { productChoices } from '../../src/app/portal/sell.ts';
import { hasLabel } from '../../src/portal/labels.ts';
import { fieldOfReason, valuesOf } from '../../src/portal/schema-form.ts';
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
function formOf(request: Record<string, unknown>): Record<string, string | string[]> {
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

/** The date `n` days from today, as the desk's date fields take it. */
const day = (n: number) => localDate(Date.now() + n * 86_400_000);
/** A medical trip to Europe every rule accepts: one traveller born in 1990, 5 to 12 days from today. */
const europeTrip = {
  'f.persons.0': '1990-05-10',
  '_rows.persons': '1',
  'f.start_date': day(5),
  'f.end_date': day(12),
  'f.is_multiple_type': 'false',
  'f.include_additional_risk': 'false',
  'f.activity': 'TRVL',
  'f.covered_territories': 'EUROPE',
};

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
      // A vehicle registered abroad is asked for once the clerk says so.
      const abroad = await get(
        h,
        `/portal/sell?product=${encodeURIComponent(m.product)}&registered=abroad`,
        cashier.cookie,
      );
      for (const name of leafNames(m.schemas.quote)) {
        expect(page.body + abroad.body, name).toMatch(
          new RegExp(`name="f\\.${name.replaceAll('.', '\\.')}(\\.0)?"`),
        );
      }
      const ex = productExamples(localDate(await h.service.svc.clock.now()))[m.product];
      const offers = await post(h, '/portal/sell/offers', cashier.cookie, {
        product: m.product,
        ...formOf(ex.quote),
      });
      expect(offers.statusCode, offers.body).toBe(200);
      expect(offers.body).toContain('<h1>Offers</h1>');
      expect(offers.body).toContain('>Choose</button>');

      // Between steps the sale is a signed token, never JSON in a hidden field.
      expect(offers.body.slice(offers.body.indexOf('<main'))).not.toMatch(/value="[^"]*&quot;/);
      const form = await post(h, '/portal/sell/details', cashier.cookie, {
        sale: hidden(offers.body, 'sale')!,
      });
      expect(form.statusCode, form.body).toBe(200);
      const { foreign_vehicle, ...rest } = (ex.order as { products: Record<string, unknown>[] }).products[0]!;
      // The quote chose the vehicle: a Moldovan one, or one from abroad, and the order keeps to it.
      const example = 'vehicle' in ex.quote ? rest : { ...rest, foreign_vehicle };
      const created = await post(h, '/portal/sell/create-order', cashier.cookie, {
        sale: hidden(form.body, 'sale')!,
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

/** Quote → choose the first offer whose row matches `offer` → the create-order form's page. */
async function choose(product: string, quoteFields: Record<string, string>, offer: RegExp) {
  const offers = await post(h, '/portal/sell/offers', cashier.cookie, { product, ...quoteFields });
  expect(offers.statusCode, offers.body).toBe(200);
  const row = offers.body.split('<tr>').find((r) => offer.test(r));
  expect(row, `no offer matching ${String(offer)}`).toBeDefined();
  const form = await post(h, '/portal/sell/details', cashier.cookie, { sale: hidden(row!, 'sale')! });
  expect(form.statusCode).toBe(200);
  return { body: form.body, fields: { sale: hidden(form.body, 'sale')! } };
}

/** What a form page sends back as it is: its hidden and filled inputs (not its buttons). */
function inputsOf(body: string): Record<string, string | string[]> {
  const main = body.slice(body.indexOf('action="/portal/sell/create-order"'));
  const out: Record<string, string | string[]> = {};
  for (const m of main.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]+)"/.exec(m[1]!)?.[1];
    const value = /value="([^"]*)"/.exec(m[1]!)?.[1];
    if (!name || name === '_csrf' || value === undefined) continue;
    const v = value.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&#39;', "'");
    const prior = out[name];
    out[name] = prior === undefined ? v : [prior].flat().concat(v);
  }
  return out;
}

describe('the steps', () => {
  it('fills in what the offer and the quote decided, so only the rest is asked', async () => {
    const { body, fields } = await choose(
      'rca',
      { 'f.vehicle': '100000001', 'f.duration': '365', 'f.idnx': '2003000000016' },
      /Moldasig/,
    );
    // Chosen: shown in words, kept in the signed sale, not asked again.
    expect(body).toContain('<dt>Insurance company</dt><dd>Moldasig</dd>');
    expect(body).toContain('<dd>100000001</dd>');
    expect(body).not.toContain('name="f.vehicle"');
    // The chosen value is where the error summary links when a rule refuses it.
    expect(body).toContain('<div id="f-insurance_company" tabindex="-1"><dt>Insurance company</dt>');
    expect(body).not.toContain('name="f.insurance_company"');
    // The start date is asked, filled with the offer's first day.
    expect(body).toMatch(/id="f-start_date" name="f.start_date" type="date" value="\d{4}-\d\d-\d\d"/);
    const created = await post(h, '/portal/sell/create-order', cashier.cookie, {
      ...inputsOf(body),
      ...fields,
      'c.phone': '+37369000111',
    });
    expect(created.statusCode, created.body).toBe(303);
  });

  it('adds and removes travellers without JavaScript, keeping what was typed', async () => {
    const base = { product: 'medical', 'f.persons.0': '1990-05-10', '_rows.persons': '1' };
    const added = await post(h, '/portal/sell/offers', cashier.cookie, { ...base, _add: 'persons' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('name="_rows.persons" value="2"');
    expect(added.body).toContain('name="f.persons.0" type="date" value="1990-05-10"');
    expect(added.body).toContain('name="f.persons.1" type="date" value=""');
    expect(added.body).toContain('>Remove Traveller 2</button>');
    const removed = await post(h, '/portal/sell/offers', cashier.cookie, {
      product: 'medical',
      'f.persons.0': '1990-05-10',
      'f.persons.1': '2015-03-01',
      '_rows.persons': '2',
      _remove: 'persons.0',
    });
    expect(removed.body).toContain('name="_rows.persons" value="1"');
    expect(removed.body).toContain('name="f.persons.0" type="date" value="2015-03-01"');
    expect(removed.body).not.toContain('name="f.persons.1"');
  });

  it('shows a schema’s refusal beside its field, naming its label', async () => {
    const res = await post(h, '/portal/sell/offers', cashier.cookie, {
      product: 'rca',
      'f.vehicle': '12345',
      'f.duration': '365',
      'f.idnx': '2003000000016',
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(
      '<span class="field-error" id="f-vehicle-error">Vehicle registration certificate number is not valid: check what was typed</span>',
    );
    expect(res.body).toContain('<a href="#f-vehicle">Vehicle registration certificate number is not valid');
    expect(res.body).toMatch(/id="f-vehicle"[^>]*aria-invalid="true"/);
  });

  it('shows a rule’s refusal beside its field, and an unknown vehicle beside the vehicle', async () => {
    const bad = await post(h, '/portal/sell/offers', cashier.cookie, {
      product: 'rca',
      'f.vehicle': '100000001',
      'f.duration': '365',
      'f.idnx': '2003000000017',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/id="f-idnx-error">IDNP or IDNO of the owner: [^<]+<\/span>/);
    const unknown = await post(h, '/portal/sell/offers', cashier.cookie, {
      product: 'rca',
      'f.vehicle': '999999999',
      'f.duration': '365',
      'f.idnx': '2003000000016',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toMatch(
      /id="f-vehicle-error">Vehicle registration certificate number: [^<]+<\/span>/,
    );
  });
});

describe('words, not codes', () => {
  it('has words in every catalogue for every field of every product', () => {
    for (const m of PRODUCT_MODULES) {
      for (const name of [...leafNames(m.schemas.quote), ...leafNames(m.schemas.order)]) {
        const path = name.replace(/\.0\./g, '.');
        expect(hasLabel(path), `${m.product}: ${path}`).toBe(true);
      }
    }
  });

  it('names activities, territories and choices in the page’s language, no code and no true/false', async () => {
    const ro = await get(h, '/portal/sell?product=medical', cashier.cookie, { 'accept-language': 'ro' });
    expect(ro.body).toContain('<option value="TRVL">Turism</option>');
    expect(ro.body).toContain('<option value="true">Călătorii multiple</option>');
    expect(ro.body).toContain('<option value="DEU">Germania</option>');
    expect(ro.body).toContain('<option value="EUROPE">Europa</option>');
    expect(ro.body).not.toMatch(/>(true|false|ABW|AFG)</);
    expect(ro.body).not.toContain('yyyy-mm-dd');
    const ru = await get(h, '/portal/sell?product=medical', cashier.cookie, { 'accept-language': 'ru' });
    expect(ru.body).toContain('<option value="DEU">Германия</option>');
    expect(ru.body).toContain('<option value="BIZZ">Деловая поездка</option>');
  });
});

describe('errors', () => {
  it('are all shown at once, in a summary linking to each field and beside each, the form keeping what was typed', async () => {
    const res = await post(
      h,
      '/portal/sell/offers',
      cashier.cookie,
      {
        product: 'rca',
        'f.vehicle': '12345',
        'f.idnx': '',
      },
      { 'accept-language': 'ro' },
    );
    expect(res.statusCode).toBe(400);
    const start = res.body.indexOf('class="error-summary"');
    const summary = res.body.slice(start, res.body.indexOf('</ul>', start));
    expect(summary).toContain('href="#f-vehicle"');
    expect(summary).toContain('href="#f-idnx"');
    expect(summary).toContain('IDNP sau IDNO al proprietarului');
    expect(res.body).toContain('id="f-idnx-error">Completați: IDNP sau IDNO al proprietarului</span>');
    expect(res.body).toContain('name="f.vehicle" type="text" value="12345"');
  });

  it('asks a person’s passport and birthday of a policyholder who is a person, not as optional', async () => {
    const { body } = await choose('medical', europeTrip, /EUR/);
    const passport = body.slice(body.indexOf('for="f-contractor-passport"'));
    expect(passport.slice(0, passport.indexOf('</label>'))).not.toContain('(optional)');
    expect(body).toMatch(/id="f-contractor-passport"[^>]* required/);
    expect(body).toMatch(
      /for="f-contractor-fullName">Company name <span class="optional">\(only for a company\)/,
    );
    expect(body).not.toContain('id="f-contractor-full_name"');
  });
});

describe('every refusal of the product’s rules at once', () => {
  /** Europe's trip with three of its rules broken: traveller born after the start, end before it, home covered. */
  const trip = {
    ...europeTrip,
    'f.persons.0': day(10),
    'f.end_date': day(3),
    'f.covered_territories': 'MDA',
  };
  /** A traveller and a company policyholder, each code with a wrong check digit. */
  const traveller = {
    'f.persons.0.first_name': 'Elena',
    'f.persons.0.last_name': 'Munteanu',
    'f.persons.0.birthday': '1990-05-10',
    'f.persons.0.address': 'str. Ștefan cel Mare 1, Chișinău',
    'f.persons.0.passport': 'AB1234567',
    'f.persons.0.idnp': '2003000000017',
    'f.contractor.type': 'company',
    'f.contractor.fullName': 'Trans Cargo SRL',
    'f.contractor.idnx': '1021600002205',
    'f.contractor.address': 'Chișinău',
  };
  /** The error summary's messages, in their order. */
  const summaryOf = (body: string) => {
    const start = body.indexOf('class="error-summary"');
    expect(start, 'an error summary').toBeGreaterThan(0);
    return [...body.slice(start, body.indexOf('</ul>', start)).matchAll(/<a href="([^"]+)">([^<]+)</g)].map(
      (m) => [m[1], m[2]],
    );
  };

  it('get-offers: three broken rules are three errors, each beside its field, in Romanian', async () => {
    const res = await post(
      h,
      '/portal/sell/offers',
      cashier.cookie,
      { product: 'medical', ...trip },
      { 'accept-language': 'ro' },
    );
    expect(res.statusCode).toBe(400);
    expect(summaryOf(res.body)).toEqual([
      ['#f-covered_territories', 'Teritorii acoperite: țara de reședință nu poate fi acoperită'],
      ['#f-end_date', 'Data încheierii: data încheierii nu poate fi înaintea datei începerii'],
      ['#f-persons-0', 'Călătorul 1: data nașterii este după data începerii'],
    ]);
    for (const id of ['f-covered_territories', 'f-end_date', 'f-persons-0'])
      expect(res.body).toMatch(new RegExp(`id="${id}-error">[^<]+<`));
    // What was typed is kept.
    expect(res.body).toContain(`value="${day(3)}"`);
    expect(res.body).toContain(`value="${day(10)}"`);
  });

  it('get-offers: a form the form checks refuse shows the rules’ refusals beside their errors, at once', async () => {
    const { 'f.activity': _activity, ...withoutActivity } = trip;
    const res = await post(
      h,
      '/portal/sell/offers',
      cashier.cookie,
      { product: 'medical', ...withoutActivity },
      { 'accept-language': 'en' },
    );
    expect(res.statusCode).toBe(400);
    const summary = summaryOf(res.body);
    expect(summary.map(([href]) => href).sort()).toEqual(
      ['#f-activity', '#f-covered_territories', '#f-end_date', '#f-persons-0'].sort(),
    );
    expect(summary.find(([href]) => href === '#f-end_date')![1]).toMatch(/end date/i);
  });

  it('places each refusal beside the field it names, first words or the field an Unknown names', () => {
    const keys = ['company_name', 'amount', 'persons.0.idnp', 'end_date', 'validity'];
    expect(fieldOfReason('Unknown company_name Donaris VIG', keys)).toBe('company_name');
    expect(fieldOfReason('Unknown validity 7d for country AT; available: 10d', keys)).toBe('validity');
    expect(fieldOfReason('persons[0].idnp has an invalid check digit', keys)).toBe('persons.0.idnp');
    expect(fieldOfReason('end_date must not be before start_date', keys)).toBe('end_date');
    expect(fieldOfReason('Unknown product lottery', keys)).toBeUndefined();
  });

  it('get-offers on the API still answers the first refusal alone, as before', async () => {
    const res = await h.call('get-offers', {
      product: 'medical',
      persons: [day(10)],
      start_date: day(5),
      end_date: day(3),
      is_multiple_type: false,
      include_additional_risk: false,
      activity: 'TRVL',
      covered_territories: ['MDA'],
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'covered_territories: MDA is the country of residence and cannot be covered',
    );
  });

  it('create-order: three broken rules are three errors, each beside its field, in Russian', async () => {
    const { body, fields } = await choose('medical', europeTrip, /EUR/);
    const res = await post(
      h,
      '/portal/sell/create-order',
      cashier.cookie,
      {
        ...inputsOf(body),
        ...fields,
        'f.end_date': day(4),
        ...traveller,
        'c.name': 'Elena Munteanu',
        'c.phone': '069123456',
      },
      { 'accept-language': 'ru' },
    );
    expect(res.statusCode, res.body.slice(res.body.indexOf('<main'))).toBe(400);
    const summary = summaryOf(res.body);
    expect(summary.map(([href]) => href)).toEqual(['#f-end_date', '#f-persons-0-idnp', '#f-contractor-idnx']);
    expect(summary.map(([, m]) => m)).toEqual([
      'Дата окончания: дата окончания не может быть раньше даты начала',
      expect.stringMatching(/^IDNP[^:]*: неверная контрольная цифра/),
      expect.stringMatching(/^IDNP или IDNO: неверная контрольная цифра/),
    ]);
    expect(res.body).toContain('value="Trans Cargo SRL"');
    expect(res.body).toContain('value="2003000000017"');
  });

  it('create-order: a customer the form refuses and the rules’ refusals come in one answer', async () => {
    const { body, fields } = await choose('medical', europeTrip, /EUR/);
    const res = await post(h, '/portal/sell/create-order', cashier.cookie, {
      ...inputsOf(body),
      ...fields,
      ...traveller,
      'c.name': 'Elena Munteanu',
      'c.phone': '',
    });
    expect(res.statusCode).toBe(400);
    expect(summaryOf(res.body).map(([href]) => href)).toEqual([
      '#f-persons-0-idnp',
      '#f-contractor-idnx',
      '#c-phone',
    ]);
  });
});

describe('the lists a form picks from', () => {
  it('offer the MD vignette only for vehicles registered abroad', () => {
    const countries = productChoices(h.service.svc, 'vignette:md').country!.map((c) => c.value);
    expect(countries).toContain('RO');
    expect(countries).not.toContain('MD');
  });
});

describe('the offers and the order form', () => {
  it('lists the offers cheapest first', async () => {
    const offers = await post(h, '/portal/sell/offers', cashier.cookie, {
      product: 'rca',
      'f.vehicle': '100000001',
      'f.duration': '365',
      'f.idnx': '2003000000016',
    });
    expect(offers.statusCode, offers.body).toBe(200);
    const prices = [...offers.body.matchAll(/<td class="num">([^<]+)<\/td>/g)].map((m) =>
      Number(
        m[1]!
          .replace(/[^0-9,.]/g, '')
          .replace(/\.(?=\d{3})/g, '')
          .replace(',', '.'),
      ),
    );
    expect(prices.length).toBeGreaterThan(1);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
  });

  it('asks for the Moldovan certificate or the foreign vehicle, as the clerk chose, each then required', async () => {
    const md = await get(h, '/portal/sell?product=vignette%3Aro', cashier.cookie);
    expect(md.body).toContain('<input type="radio" name="registered" value="md" checked>');
    expect(md.body).toMatch(/id="f-vehicle"[^>]* required/);
    expect(md.body).not.toContain('id="f-foreign_vehicle"');
    const abroad = await get(h, '/portal/sell?product=vignette%3Aro&registered=abroad', cashier.cookie);
    expect(abroad.body).not.toContain('id="f-vehicle"');
    expect(abroad.body).toContain('id="f-foreign_vehicle"');
    expect(abroad.body).not.toMatch(/<legend>Foreign vehicle[^<]*<span class="optional">/);
  });

  it('asks nothing of a foreign vehicle once a Moldovan one was quoted, and never offers Moldova abroad', async () => {
    const { body } = await choose('vignette:ro', { 'f.vehicle': '100000001' }, /30 zile/);
    expect(body).not.toContain('id="f-foreign_vehicle"');
    const form = await get(h, '/portal/sell?product=vignette%3Aro&registered=abroad', cashier.cookie);
    const select = form.body.slice(form.body.indexOf('id="f-foreign_vehicle-registration_country"'));
    expect(select.slice(0, select.indexOf('</select>'))).not.toContain('value="MD"');
  });
});

describe('what the offers page sends back', () => {
  it('is checked again: a hand-made quote or offer is a 400 that says start again, never a 500', async () => {
    const { fields } = await choose(
      'rca',
      { 'f.vehicle': '100000001', 'f.duration': '365', 'f.idnx': '2003000000016' },
      /Moldasig/,
    );
    const [payload, mac] = fields.sale.split('.') as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), offer: { price: 1 } }),
    ).toString('base64url');
    for (const sale of [`${forged}.${mac}`, 'garbage', `${payload}.`, '']) {
      const res = await post(h, '/portal/sell/details', cashier.cookie, { sale });
      expect(res.statusCode, sale.slice(0, 40)).toBe(400);
      expect(res.body).toContain('This form is incomplete: start again from Sell.');
    }
    // A token is good only in the session that made it.
    const other = await portalUser(h, cashier.partnerId, 'cashier');
    const res = await post(h, '/portal/sell/details', other.cookie, { sale: fields.sale });
    expect(res.statusCode).toBe(400);
  });
});

describe('the customer', () => {
  it('must have a phone: the refusal is beside Phone, and nothing is created', async () => {
    const { body, fields } = await choose(
      'rca',
      { 'f.vehicle': '100000001', 'f.duration': '365', 'f.idnx': '2003000000016' },
      /Moldasig/,
    );
    const orders = () =>
      h.service.svc.db
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('partner_id', '=', cashier.partnerId)
        .executeTakeFirstOrThrow();
    const before = await orders();
    const res = await post(h, '/portal/sell/create-order', cashier.cookie, {
      ...inputsOf(body),
      ...fields,
      'c.name': 'Ion Popescu',
    });
    expect(res.statusCode).toBe(400);
    expect(await orders()).toEqual(before);
    expect(res.body).toContain('<span class="field-error" id="c-phone-error">Enter Phone</span>');
    expect(res.body).toContain('name="c.name" type="text" value="Ion Popescu"');
  });
});

describe('the Romanian vignette on the sandbox clock', () => {
  afterAll(async () => h.setClock(null));

  const sell = async (iso: string) => {
    await h.setClock(iso);
    const { body, fields } = await choose('vignette:ro', { 'f.vehicle': '100000001' }, /30 zile/);
    const created = await post(h, '/portal/sell/create-order', cashier.cookie, {
      ...inputsOf(body),
      ...fields,
      'c.phone': '+37369000111',
    });
    expect(created.statusCode, created.body).toBe(303);
    return created.headers.location as string;
  };
  const record = (page: string, n: string) =>
    post(h, `${page}/payment`, cashier.cookie, { receipt_id: `RRN-${n}`, transaction_id: `TX-${n}` });

  it('sells under the old tariff and under the new one', async () => {
    for (const [iso, n] of [
      ['2026-09-20T12:00:00+03:00', '1'],
      ['2026-10-05T12:00:00+03:00', '2'],
    ] as const) {
      const page = await sell(iso);
      const paid = await record(page, n);
      expect(paid.statusCode, paid.body).toBe(303);
      expect(paid.headers.location).toBe(`${page}?done=payment-recorded`);
      // Pressed again (the same receipt): the order as it is, and no second entry in the log.
      expect((await record(page, n)).statusCode).toBe(303);
      const audited = await h.service.svc.db
        .selectFrom('audit_log')
        .where('target', '=', page.split('/').at(-1)!)
        .select(['action', 'actor'])
        .orderBy('id')
        .execute();
      expect(audited.map((a) => a.action)).toEqual(['order.create', 'order.record_payment']);
      expect(new Set(audited.map((a) => a.actor))).toEqual(
        new Set([`portal:${cashier.partnerId}:${cashier.email}`]),
      );
    }
  });

  it('refuses a payment after the tariff switch above the form, without the [API] prefix', async () => {
    const page = await sell('2026-09-30T23:50:00+03:00');
    await h.setClock('2026-10-01T00:05:00+03:00');
    const res = await record(page, '3');
    expect(res.statusCode).toBe(400);
    const id = page.split('/').at(-1)!;
    expect(res.body).toContain(
      `<p class="error" role="alert">Order ${id}: The vignette tariff changed since this order was made, so its price is no longer valid: sell it again as a new order.</p>`,
    );
    expect(res.body).not.toContain('[API]');
    // Nothing changed.
    const row = await h.service.svc.db
      .selectFrom('orders')
      .where('id', '=', id)
      .select(['status', 'payment'])
      .executeTakeFirst();
    expect(row).toEqual({ status: 'draft', payment: null });
  });
});
