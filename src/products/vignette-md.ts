import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { formatAmount } from '../domain/money.ts';
import { endDateForDays, endDateForMonths } from '../domain/time.ts';
import { normalisePlate } from '../domain/vehicle.ts';
import { COUNTRY_CHOICES, countryIso2, foreignCountryIso2 } from './countries.ts';
import { StringEnum } from './enums.ts';
import { Amount, eurPrice, FeeSchema } from './pricing.ts';
import { issued, issuedPrice, offerPrice, periodText, priceLines, priceProperties } from './fields.ts';
import { offerWindow, requireIdnx, requireWindowStart, S } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * The Moldovan road vignette for foreign-registered vehicles. Tariff in EUR per category and
 * period, charged in MDL with the reseller commission on top; bought up to a year ahead.
 */
export const MD_PERIODS = [
  '1_day',
  '7_days',
  '15_days',
  '30_days',
  '90_days',
  '180_days',
  '>180_days',
  '12_months',
] as const;
type Period = (typeof MD_PERIODS)[number];
export const MD_CATEGORIES = ['M1', 'M2', 'M3', 'N1', 'N2', 'N3'] as const;
type Category = (typeof MD_CATEGORIES)[number];

/** An object whose keys may only be some of `keys` (a typo in the catalogue stops the start). */
const SomeOf = (keys: readonly string[], value: TSchema) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Optional(value)])), {
    additionalProperties: false,
  });

const PeriodSchema = Type.Union([
  Type.Object({ days: Type.Integer({ minimum: 1 }), label: Type.String() }),
  Type.Object({ months: Type.Integer({ minimum: 1 }), label: Type.String() }),
]);
const CatalogueObject = Type.Object({
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  min_start_offset_days: Type.Integer({ minimum: 0 }),
  max_interval: Type.Integer({ minimum: 0 }),
  fee: FeeSchema,
  periods: SomeOf(MD_PERIODS, PeriodSchema),
  categories: SomeOf(
    MD_CATEGORIES,
    Type.Object({ label: Type.String(), tariffs: SomeOf(MD_PERIODS, Amount) }),
  ),
});
type MdCatalogue = Omit<Static<typeof CatalogueObject>, 'periods' | 'categories'> & {
  periods: Partial<Record<Period, Static<typeof PeriodSchema>>>;
  categories: Partial<Record<Category, { label: string; tariffs: Partial<Record<Period, string>> }>>;
};
/** The catalogue's schema, typed as what it lets through: only the periods and categories named. */
const CatalogueSchema = Type.Unsafe<MdCatalogue>(CatalogueObject);

const period = () => StringEnum(MD_PERIODS, `Allowed per category: ${periodsHelp}`);
const periodsHelp =
  'M1: 7_days, 15_days, 30_days, 90_days, 180_days, >180_days; others: 1_day, 7_days, 30_days, 90_days, 12_months';
const category = () => StringEnum(MD_CATEGORIES, 'EU vehicle category');
const country = (description: string) => Type.String({ pattern: '^[A-Za-z]{2,3}$', description });

const quoteSchema = Type.Object({ period: period(), vehicle_category: category() });
const orderSchema = Type.Object({
  identity_document: Type.String({
    pattern: '^[A-Za-z0-9]{5,20}$',
    description: 'Driver IDNP (13 digits, MD residents) or passport number',
  }),
  driver_full_name: S.text(),
  country: country('Vehicle registration country, ISO2 or ISO3, not MD'),
  start_date: S.date(),
  period: period(),
  vehicle_category: category(),
  registration_number: Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,13}[A-Za-z0-9]$',
    description: 'Plate; internal spaces kept for AT and DE',
  }),
  vin: Type.String({
    pattern: '^[A-Za-z0-9]{1,17}$',
    description: 'VIN or chassis number, up to 17 letters and digits',
  }),
  residence_country: Type.Optional(country('Driver residence, ISO2 or ISO3')),
});
type MdOrder = Static<typeof orderSchema>;

interface Tariff {
  category: Category;
  period: Period;
  amount: string;
}

/** The per-category period rule: the schema knows every period, the catalogue which one a category has. */
function tariffOf(cat: MdCatalogue, category: Category, period: Period): Tariff {
  const tariffs = cat.categories[category]?.tariffs ?? {};
  const amount = tariffs[period];
  if (!amount) {
    throw productRule(
      `Period ${period} is not sold for vehicle category ${category}; allowed: ${Object.keys(tariffs).join(', ')}`,
    );
  }
  return { category, period, amount };
}

const priceOf = (ctx: ProductContext, cat: MdCatalogue, t: Tariff) =>
  eurPrice(ctx, t.amount, cat.currency, cat.fee);

function endDate(cat: MdCatalogue, start: string, period: Period): string {
  const p = cat.periods[period];
  if (!p) throw new Error(`catalogue vignette-md.json has no period ${period}`);
  return 'days' in p ? endDateForDays(start, p.days) : endDateForMonths(start, p.months);
}

const periodLabel = (cat: MdCatalogue, period: Period) => cat.periods[period]?.label ?? period;

const issuedFields = {
  registration_number: Type.String(),
  vehicle_category: Type.String(),
  period: Type.String(),
  country: Type.String(),
  vin: Type.String(),
  start_date: Type.String(),
  end_date: Type.String(),
  transaction_id: Type.String(),
  ...priceProperties,
};

interface MdDetails {
  request: MdOrder;
  country: string;
  residence_country: string;
  registration_number: string;
  vin: string;
  tariff: string;
  /** What priced the draft, as the wire shows it: the issued vignette repeats these. */
  reference_price: string;
  reference_exchange_rate: string;
  converted: number;
  fee: number;
}

export const vignetteMd = defineProduct<MdDetails>()('vignette:md', CatalogueSchema, {
  idPrefix: 'MDV',
  schemas: { quote: quoteSchema, order: orderSchema, offer: {}, issued: issuedFields },
  createEchoes: { startDate: true, endDate: true },
  // The vignette is for vehicles registered abroad: the form does not offer Moldova.
  choices: () => ({ country: COUNTRY_CHOICES.filter((c) => c.value !== 'MD') }),

  async quote(ctx, cat, req) {
    const t = tariffOf(cat, req.vehicle_category, req.period);
    const p = priceOf(ctx, cat, t);
    return {
      offers: [
        {
          product: 'vignette:md',
          name: `Vinieta Moldova, ${periodLabel(cat, t.period)}, ${t.category} (${cat.categories[t.category]!.label})`,
          ...offerPrice(p, p.price),
          ...offerWindow(ctx, cat),
        },
      ],
    };
  },

  async price(ctx, cat, item) {
    const isIdnp = /^[0-9]{13}$/.test(item.identity_document);
    const [t, country, , residenceGiven] = await checkAll(
      () => tariffOf(cat, item.vehicle_category, item.period),
      () => foreignCountryIso2('country', item.country),
      () => (isIdnp ? requireIdnx('identity_document', item.identity_document, 'idnp') : undefined),
      () => (item.residence_country ? countryIso2('residence_country', item.residence_country) : undefined),
      () => requireWindowStart(ctx, cat, item.start_date),
    );
    const residence = residenceGiven ?? (isIdnp ? 'MD' : country);
    const plate = normalisePlate(item.registration_number, country);
    const p = priceOf(ctx, cat, t);
    const details: MdDetails = {
      request: item,
      country,
      residence_country: residence,
      registration_number: plate,
      vin: item.vin.toUpperCase(),
      tariff: t.amount,
      reference_price: p.reference_price,
      reference_exchange_rate: p.reference_exchange_rate,
      converted: p.converted,
      fee: p.fee,
    };
    return {
      price: p.price,
      description: `Vinieta Moldova, ${periodLabel(cat, t.period)}, Categoria ${t.category}, ${plate} (${country})`,
      startDate: item.start_date,
      endDate: endDate(cat, item.start_date, t.period),
      details,
    };
  },

  correct: ({ details: { request } }, changes) => ({
    request: {
      ...request,
      ...(changes.start_date !== undefined ? { start_date: changes.start_date } : {}),
      ...(changes.plate_number !== undefined ? { registration_number: changes.plate_number } : {}),
    },
  }),

  cover: ({ details: d }) => ({ plate: d.registration_number, vin: d.vin }),

  issue(_ctx, cat, row, receipt) {
    const d = row.details;
    const fields = {
      registration_number: d.registration_number,
      vehicle_category: d.request.vehicle_category,
      period: d.request.period,
      country: d.country,
      vin: d.vin,
      start_date: row.start_date!,
      end_date: row.end_date!,
      transaction_id: receipt.transactionId,
      ...issuedPrice(d, row.price),
    };
    return issued(fields, 'Vinietă Republica Moldova', [
      { label: 'Număr tranzacție', value: receipt.transactionId },
      { label: 'Serie vinietă', value: receipt.series },
      { label: 'Număr de înmatriculare', value: fields.registration_number },
      { label: 'Țara de înmatriculare', value: fields.country },
      { label: 'VIN / număr șasiu', value: fields.vin },
      {
        label: 'Categoria vehiculului',
        value: `${fields.vehicle_category} – ${cat.categories[d.request.vehicle_category]?.label ?? ''}`,
      },
      { label: 'Perioada de valabilitate', value: periodLabel(cat, d.request.period) },
      { label: 'Valabilă', value: periodText(row) },
      { label: 'Conducător auto', value: d.request.driver_full_name },
      { label: 'Act de identitate', value: d.request.identity_document },
      { label: 'Țara de reședință', value: d.residence_country },
      ...priceLines('Tarif de referință', fields, row.price, [
        { label: 'Comision', value: formatAmount(d.fee, 'MDL') },
      ]),
    ]);
  },
});
