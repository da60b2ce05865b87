import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { baniToMdl } from '../domain/money.ts';
import { formatDmy } from '../domain/time.ts';
import { countryName, iso2Of } from './countries.ts';
import {
  ACTIVITIES,
  companyName,
  coverageOf,
  MedicalCatalogueSchema,
  medicalPricer,
  resolveTrip,
} from './medical-tariff.ts';
import { rateText, type StoredConversion, storedConversion, storedReference } from './pricing.ts';
import { issued, periodText, policyLines, priceLines } from './fields.ts';
import { minStartDate, requireIdnx, S } from './shared.ts';
import { defineProduct } from './types.ts';

/**
 * Travel medical insurance. Its quote has its own shape: offers keyed by insured amount, each a
 * list of company offers, with the rate and the start-date window at the top level.
 */
const Territory = Type.String({
  pattern: '^(?:[A-Z]{3}|EUROPE|WORLD)$',
  description: 'ISO3 country code, or EUROPE, CSI, WORLD',
});
const trip = {
  covered_territories: Type.Array(Territory, { minItems: 1, maxItems: 60, uniqueItems: true }),
  start_date: S.date(),
  end_date: Type.Optional(S.date('yyyy-mm-dd; required for a single trip')),
  is_multiple_type: Type.Boolean({ description: 'true: multiple trips; false: a single trip' }),
  availability: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 12, description: 'Months; multiple trips' }),
  ),
  insured_days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 365, description: 'Insured days; multiple trips' }),
  ),
  include_additional_risk: Type.Boolean(),
  activity: Type.Union(
    ACTIVITIES.map((a) => Type.Literal(a)),
    { description: ACTIVITIES.join(', ') },
  ),
};
const quoteSchema = Type.Object({
  ...trip,
  persons: Type.Array(S.date('Birthday, yyyy-mm-dd'), { minItems: 1, maxItems: 10 }),
});

const TravelPerson = Type.Object({
  first_name: S.text(100),
  last_name: S.text(100),
  birthday: S.date(),
  address: S.text(),
  passport: Type.String({ pattern: '^[A-Za-z0-9 ]{5,20}$', description: 'Series and number' }),
  idnp: S.idnp(),
});
/** IndividualPerson or Company, told apart by `type`; a company's name as `fullName` or `full_name`. */
const Contractor = Type.Object(
  {
    type: Type.Union([Type.Literal('individual'), Type.Literal('company')]),
    idnx: S.idnx(),
    address: S.text(),
    passport: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9 ]{5,20}$' })),
    birthday: Type.Optional(S.date()),
    first_name: Type.Optional(S.text(100)),
    last_name: Type.Optional(S.text(100)),
    fullName: Type.Optional(S.text()),
    full_name: Type.Optional(S.text()),
  },
  {
    allOf: [
      {
        if: { properties: { type: { const: 'individual' } } },
        then: { required: ['passport', 'birthday', 'first_name', 'last_name'] },
      },
      {
        if: { properties: { type: { const: 'company' } } },
        then: { anyOf: [{ required: ['fullName'] }, { required: ['full_name'] }] },
      },
    ],
  },
);
const orderSchema = Type.Object({
  ...trip,
  persons: Type.Array(TravelPerson, { minItems: 1, maxItems: 10 }),
  amount: Type.String({ pattern: '^[0-9]+$', description: 'Insured amount, a key of the quote offers' }),
  company_name: S.text(100),
  contractor: Contractor,
});
type OrderItem = Static<typeof orderSchema>;

const CompanyOffer = Type.Object({
  region: Type.String(),
  companyId: Type.Number(),
  companyName: Type.String(),
  tariff: Type.Number({ description: 'Premium in EUR' }),
  coverage: Type.Array(
    Type.Object({
      text: Type.String(),
      status: Type.Union([Type.Literal('included'), Type.Literal('excluded')]),
    }),
  ),
  terms: Type.String({ description: 'URL of the coverage PDF' }),
  priceMDL: Type.Number(),
});
const quoteResponse = Type.Object(
  {
    product: Type.Literal('medical'),
    offers: Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Array(CompanyOffer)),
    reference_exchange_rate: Type.String(),
    max_interval: Type.Number(),
    min_start_date: Type.String(),
  },
  { $id: 'MedicalOffers' },
);

const ACTIVITY_LABELS: Record<(typeof ACTIVITIES)[number], string> = {
  TRVL: 'Turism',
  WORK: 'Muncă',
  BIZZ: 'Afaceri',
  STUDY: 'Studii',
  SKI: 'Schi',
  ADV: 'Turism cu sporturi de agrement',
};

const contractorName = (c: OrderItem['contractor']) =>
  c.type === 'company' ? (c.fullName ?? c.full_name)! : `${c.first_name} ${c.last_name}`;

const issuedFields = {
  start_date: Type.String(),
  end_date: Type.String(),
  region: Type.String(),
  insurance_company: Type.String(),
  reference_price: Type.String(),
  reference_exchange_rate: Type.String(),
  insured_amount: Type.String(),
};

interface MedicalDetails extends StoredConversion {
  request: OrderItem;
  region: string;
  company: string;
  company_name: string;
  insured_days: number;
}

export const medical = defineProduct<MedicalDetails>()('medical', MedicalCatalogueSchema, {
  idPrefix: 'IAM',
  schemas: { quote: quoteSchema, order: orderSchema, quoteResponse, offer: {}, issued: issuedFields },
  // A region covers each of its countries; a country is named in English when it is known.
  choices: (cat) => ({
    covered_territories: [
      ...cat.regions.map((r) => ({ value: r.code, label: r.label })),
      ...cat.regions
        .flatMap((r) => r.countries)
        .filter((c, i, all) => all.indexOf(c) === i && !cat.excluded_countries.includes(c))
        .map((c) => {
          const iso2 = iso2Of(c);
          return { value: c, label: iso2 ? `${countryName(iso2)} (${c})` : c };
        })
        .sort((a, b) => a.label.localeCompare(b.label, 'en')),
    ],
  }),

  async quote(ctx, cat, req) {
    const t = await resolveTrip(ctx, cat, req, req.persons);
    const priceOf = medicalPricer(ctx, cat, req, t);
    const companies = cat.companies.map((c) => ({
      company: c,
      name: companyName(ctx, c),
      coverage: coverageOf(cat, c, req.include_additional_risk),
    }));
    const offers = Object.fromEntries(
      t.region.amounts.map((amount) => [
        amount,
        companies.map(({ company: c, name, coverage }) => {
          const p = priceOf(c, amount);
          return {
            region: t.region.label,
            companyId: c.id,
            companyName: name,
            tariff: p.reference / 100,
            coverage,
            terms: c.terms,
            priceMDL: baniToMdl(p.price),
          };
        }),
      ]),
    );
    return {
      product: 'medical',
      offers,
      reference_exchange_rate: rateText(ctx, cat.currency),
      max_interval: cat.max_interval,
      min_start_date: minStartDate(ctx, cat),
    };
  },

  async price(ctx, cat, item) {
    const [, , t, company] = await checkAll(
      () => checkAll(...item.persons.map((p, i) => () => requireIdnx(`persons[${i}].idnp`, p.idnp, 'idnp'))),
      () => {
        requireIdnx('contractor.idnx', item.contractor.idnx);
        if (item.contractor.type === 'company' && !item.contractor.idnx.startsWith('1'))
          throw productRule('contractor.idnx of a company must be an IDNO');
      },
      async () => {
        const trip = await resolveTrip(
          ctx,
          cat,
          item,
          item.persons.map((p) => p.birthday),
        );
        if (!trip.region.amounts.includes(item.amount))
          throw productRule(
            `amount ${item.amount} is not offered for ${trip.region.label}; offered: ${trip.region.amounts.join(', ')}`,
          );
        return trip;
      },
      () => {
        const found = cat.companies.find((c) => companyName(ctx, c) === item.company_name);
        if (!found) throw productRule(`Unknown company_name ${item.company_name}`);
        return found;
      },
    );
    const p = medicalPricer(ctx, cat, item, t)(company, item.amount);
    return {
      price: p.price,
      description: 'Asigurare Medicala pentru calatorii',
      startDate: t.startDate,
      endDate: t.endDate,
      details: {
        request: item,
        region: t.region.label,
        company: company.company,
        company_name: item.company_name,
        insured_days: t.insuredDays,
        ...storedConversion(ctx, p),
      },
    };
  },

  cover: ({ details: d }) => ({ company: d.company }),

  issue(_ctx, _cat, row, receipt) {
    const d = row.details;
    const r = d.request;
    const fields = {
      start_date: row.start_date!,
      end_date: row.end_date!,
      region: d.region,
      insurance_company: d.company_name,
      ...storedReference(d),
      insured_amount: `${r.amount} ${d.currency}`,
    };
    const persons = r.persons.map((p, i) => ({
      label: `Persoana asigurată ${i + 1}`,
      value: `${p.first_name} ${p.last_name}, născut(ă) ${formatDmy(p.birthday)}, IDNP ${p.idnp}, pașaport ${p.passport}`,
    }));
    return issued(fields, 'Poliță de asigurare medicală pentru călătorii în străinătate', [
      ...policyLines(receipt, fields.insurance_company),
      { label: 'Contractant', value: `${contractorName(r.contractor)} (${r.contractor.idnx})` },
      ...persons,
      { label: 'Teritoriu', value: `${fields.region} (${r.covered_territories.join(', ')})` },
      { label: 'Scopul călătoriei', value: `${ACTIVITY_LABELS[r.activity]} (${r.activity})` },
      {
        label: 'Tip',
        value: r.is_multiple_type
          ? `Călătorii multiple, ${r.availability} luni, ${d.insured_days} zile asigurate`
          : `O singură călătorie, ${d.insured_days} zile`,
      },
      { label: 'Perioada', value: periodText(row) },
      { label: 'Suma asigurată', value: fields.insured_amount },
      { label: 'Riscuri suplimentare', value: r.include_additional_risk ? 'incluse' : 'neincluse' },
      ...priceLines('Primă de referință', fields, row.price),
    ]);
  },
});
