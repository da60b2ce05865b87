import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { formatAmount } from '../domain/money.ts';
import { endDateForDays } from '../domain/time.ts';
import { EU_CATEGORIES, normalisePlate, type EuCategory } from '../domain/vehicle.ts';
import { countryIso2, foreignCountryIso2 } from './countries.ts';
import { OneOfLiterals, StringEnum } from './enums.ts';
import { Amount, eurPrice, FeeSchema } from './pricing.ts';
import {
  issued,
  issuedPrice,
  offerPrice,
  periodText,
  priceLines,
  priceProperties,
  type Reference,
} from './fields.ts';
import { correctVignette, requireStartDate, requireVehicle, S } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * Electronic vignettes of several European countries. Each country sells validity options; the
 * tiered ones (Hungary, Slovenia) price by a vehicle class derived from category, mass and seats.
 * Issued after a visible `processing` stage, as the foreign registries answer asynchronously.
 */
const LANGS = ['RO', 'EN', 'RU'] as const;
type Lang = (typeof LANGS)[number];
const Localised = Type.Object({ RO: Type.String(), EN: Type.String(), RU: Type.String() });

const CatalogueSchema = Type.Object({
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  max_interval: Type.Integer({ minimum: 0 }),
  fee: FeeSchema,
  labels: Type.Object({ vignette: Localised }),
  countries: Type.Array(
    Type.Object({
      code: Type.String({ pattern: '^[A-Z]{2}$' }),
      name: Localised,
      tiered: Type.Boolean(),
      classes: Type.Array(
        Type.Object({
          id: Type.String({ minLength: 1 }),
          categories: Type.Array(OneOfLiterals(EU_CATEGORIES), { minItems: 1 }),
          max_mass_kg: Type.Optional(Type.Integer({ minimum: 1 })),
          max_places: Type.Optional(Type.Integer({ minimum: 1 })),
          info: Type.Optional(Localised),
        }),
        { minItems: 1 },
      ),
      options: Type.Array(
        Type.Object({
          id: Type.String({ pattern: '^[0-9a-z]+$' }),
          duration: Type.Integer({ minimum: 1 }),
          label: Localised,
          prices: Type.Record(Type.String(), Amount),
        }),
        { minItems: 1 },
      ),
    }),
    { minItems: 1 },
  ),
});
type EuCatalogue = Static<typeof CatalogueSchema>;
type Country = EuCatalogue['countries'][number];
type VehicleClass = Country['classes'][number];
type ValidityOption = Country['options'][number];

const iso2 = (description: string) => Type.String({ pattern: '^[A-Za-z]{2}$', description });
const category = () => StringEnum(EU_CATEGORIES, 'EU vehicle category');
const mass = () => Type.Integer({ minimum: 1, maximum: 100_000, description: 'kg' });
const places = () => Type.Integer({ minimum: 1, maximum: 200, description: 'seats' });

const quoteSchema = Type.Object({
  country: Type.Optional(iso2('ISO2 destination; omit for every country on sale')),
  vehicle: Type.Optional(S.vehicle()),
  foreign_vehicle: Type.Optional(
    Type.Object({
      registration_country: iso2('ISO2, not MD'),
      category: category(),
      max_authorized_mass: Type.Optional(mass()),
      places: Type.Optional(places()),
    }),
  ),
  validity: Type.Optional(Type.String({ maxLength: 20, description: 'Option id; filters to one option' })),
  start_date: Type.Optional(S.date('yyyy-mm-dd; defaults to today')),
  // Any value is accepted (the contract: lang never causes a rejection, docs/api-reference.md#vignetteeu);
  // langOf reads it, defaulting to RO.
  lang: Type.Optional(
    Type.Unknown({ description: 'RO (default), EN, RU, case-insensitive; anything else reads as RO' }),
  ),
});
const orderSchema = Type.Object({
  country: iso2('ISO2 destination'),
  validity: Type.String({ minLength: 1, maxLength: 20, description: 'Option id from get-offers' }),
  start_date: S.date(),
  vehicle: Type.Optional(S.vehicle()),
  foreign_vehicle: Type.Optional(
    Type.Object({
      registration_country: iso2('ISO2, not MD'),
      category: category(),
      plate_number: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,13}[A-Za-z0-9]$' }),
      vin: Type.String({
        pattern: '^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$',
        description: '17 characters, ISO 3779 (no I, O, Q); required for every country',
      }),
      make: Type.Optional(S.text(60)),
      model: Type.Optional(S.text(60)),
      max_authorized_mass: Type.Optional(mass()),
      places: Type.Optional(places()),
    }),
  ),
});
type EuOrder = Static<typeof orderSchema>;

/** What decides the vehicle class: missing attributes constrain nothing. */
interface Profile {
  category: EuCategory;
  massKg?: number | undefined;
  places?: number | undefined;
}

/** An MD-registered vehicle is quoted and ordered through `vehicle`, not `foreign_vehicle`. */
const USE_VEHICLE = 'use vehicle for an MD-registered vehicle';

const langOf = (raw: unknown): Lang => {
  const upper = typeof raw === 'string' ? raw.trim().toUpperCase() : 'RO';
  return (LANGS as readonly string[]).includes(upper) ? (upper as Lang) : 'RO';
};

function countryOf(cat: EuCatalogue, code: string): Country {
  const c = cat.countries.find((x) => x.code === code.toUpperCase());
  if (!c) {
    throw productRule(
      `No vignette:eu on sale for country ${code}; available: ${cat.countries.map((x) => x.code).join(', ')}`,
    );
  }
  return c;
}

const fits = (k: VehicleClass, p: Profile) =>
  k.categories.includes(p.category) &&
  (k.max_mass_kg === undefined || p.massKg === undefined || p.massKg <= k.max_mass_kg) &&
  (k.max_places === undefined || p.places === undefined || p.places <= k.max_places);

/** The first class the vehicle fits (classes are listed cheapest first), or every class without a vehicle. */
const classesFor = (c: Country, p: Profile | null): VehicleClass[] => {
  if (!p) return c.classes;
  const k = c.classes.find((x) => fits(x, p));
  return k ? [k] : [];
};

const priceOf = (ctx: ProductContext, cat: EuCatalogue, o: ValidityOption, k: VehicleClass) => {
  const amount = o.prices[k.id];
  return amount === undefined ? null : eurPrice(ctx, amount, cat.currency, cat.fee);
};

async function quoteProfile(ctx: ProductContext, req: Static<typeof quoteSchema>): Promise<Profile | null> {
  if (req.vehicle && req.foreign_vehicle)
    throw productRule('Send either vehicle or foreign_vehicle, not both');
  if (req.vehicle) {
    const v = await requireVehicle(ctx, req.vehicle);
    return { category: v.category, massKg: v.maxMassKg, places: v.seats };
  }
  const f = req.foreign_vehicle;
  if (!f) return null;
  foreignCountryIso2('foreign_vehicle.registration_country', f.registration_country, USE_VEHICLE);
  return { category: f.category, massKg: f.max_authorized_mass, places: f.places };
}

interface EuVehicle {
  certificate?: string;
  plate: string;
  carModel: string;
  vin: string;
  registrationCountry: string;
  profile: Profile;
}

async function orderVehicle(ctx: ProductContext, item: EuOrder): Promise<EuVehicle> {
  if (!!item.vehicle === !!item.foreign_vehicle) {
    throw productRule('Exactly one of vehicle or foreign_vehicle is required');
  }
  if (item.vehicle) {
    const v = await requireVehicle(ctx, item.vehicle);
    if (!v.vin) {
      throw productRule(
        'The vehicle has no VIN or chassis number in the registry; the vignette cannot be issued without one',
      );
    }
    return {
      certificate: v.certificate,
      plate: v.plate,
      carModel: `${v.make} ${v.model}`,
      vin: v.vin,
      registrationCountry: 'MD',
      profile: { category: v.category, massKg: v.maxMassKg, places: v.seats },
    };
  }
  const f = item.foreign_vehicle!;
  const country = foreignCountryIso2(
    'foreign_vehicle.registration_country',
    f.registration_country,
    USE_VEHICLE,
  );
  return {
    plate: normalisePlate(f.plate_number, country),
    carModel: [f.make, f.model].filter(Boolean).join(' ').toUpperCase(),
    vin: f.vin.toUpperCase(),
    registrationCountry: country,
    profile: { category: f.category, massKg: f.max_authorized_mass, places: f.places },
  };
}

const offerFields = {
  country: Type.String(),
  country_name: Type.String(),
  validity: Type.String(),
  duration: Type.Integer(),
  vehicle_class: Type.String(),
  vehicle_class_info: Type.String(),
};
const issuedFields = {
  country: Type.String(),
  validity: Type.String(),
  plate_number: Type.String(),
  car_model: Type.String(),
  vin: Type.String(),
  registration_country: Type.String(),
  document_number: Type.String(),
  transaction_id: Type.String(),
  start_date: Type.String(),
  end_date: Type.String(),
  ...priceProperties,
};

interface EuDetails extends Reference {
  /** The request as priced (absent from orders made before corrections existed). */
  request?: EuOrder;
  country: string;
  validity: string;
  duration: number;
  vehicle_class: string;
  vehicle: EuVehicle;
  holder: string;
  tariff: string;
  fee: number;
}

export const vignetteEu = defineProduct<EuDetails>()('vignette:eu', CatalogueSchema, {
  idPrefix: 'EUV',
  asyncIssue: true,
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },
  choices: (cat) => ({
    country: cat.countries.map((c) => ({ value: c.code, label: `${c.name.EN} (${c.code})` })),
  }),
  createEchoes: { startDate: true, endDate: false },

  async quote(ctx, cat, req) {
    const lang = langOf(req.lang);
    const [profile] = await checkAll(
      () => quoteProfile(ctx, req),
      () => (req.start_date ? requireStartDate(req.start_date, ctx.today, cat.max_interval) : undefined),
    );
    // A destination not on sale has no offer to answer (create-order refuses it, naming those on sale).
    const countries =
      req.country === undefined
        ? cat.countries
        : cat.countries.filter((c) => c.code === req.country!.toUpperCase());
    const offers = [];
    for (const c of countries) {
      for (const k of classesFor(c, profile)) {
        for (const o of c.options) {
          if (req.validity !== undefined && o.id !== req.validity) continue;
          const p = priceOf(ctx, cat, o, k);
          if (!p) continue;
          offers.push({
            product: 'vignette:eu',
            name: `${cat.labels.vignette[lang]} ${c.name[lang]}, ${o.label[lang]}${c.tiered ? `, ${k.id}` : ''}`,
            ...offerPrice(p, p.price),
            min_start_date: ctx.today,
            max_interval: cat.max_interval,
            country: c.code,
            country_name: c.name[lang],
            validity: o.id,
            duration: o.duration,
            ...(c.tiered ? { vehicle_class: k.id, vehicle_class_info: k.info?.[lang] ?? k.id } : {}),
          });
        }
      }
    }
    return { offers };
  },

  async price(ctx, cat, item) {
    const [c, v, holder] = await checkAll(
      () => countryOf(cat, countryIso2('country', item.country)),
      () => orderVehicle(ctx, item),
      () => {
        const name = ctx.customer?.name?.trim();
        if (!name) throw productRule('customer.name is required: it is the vignette holder');
        return name;
      },
    );
    const [{ k, o, p }] = await checkAll(
      () => {
        const [cls] = classesFor(c, v.profile);
        if (!cls)
          throw productRule(
            `No ${c.code} vignette is sold for a vehicle of category ${v.profile.category} of this mass or size`,
          );
        const option = c.options.find((x) => x.id === item.validity);
        const price = option && priceOf(ctx, cat, option, cls);
        if (!option || !price) {
          const ids = c.options.filter((x) => x.prices[cls.id] !== undefined).map((x) => x.id);
          throw productRule(
            `Unknown validity ${item.validity} for country ${c.code}; available: ${ids.join(', ')}`,
          );
        }
        return { k: cls, o: option, p: price };
      },
      () => requireStartDate(item.start_date, ctx.today, cat.max_interval),
    );
    const details: EuDetails = {
      request: item,
      country: c.code,
      validity: o.id,
      duration: o.duration,
      vehicle_class: k.id,
      vehicle: v,
      holder,
      tariff: o.prices[k.id]!,
      reference_price: p.reference_price,
      reference_exchange_rate: p.reference_exchange_rate,
      fee: p.fee,
    };
    return {
      price: p.price,
      description: `Vinietă ${c.name.RO}, ${o.label.RO}, ${v.plate}`,
      startDate: item.start_date,
      endDate: endDateForDays(item.start_date, o.duration),
      details,
    };
  },

  correct({ details: { request } }, changes) {
    if (!request) return { refused: 'This order was sold before corrections were possible' };
    return correctVignette(request, changes);
  },

  cover: ({ details: { vehicle: v } }) => ({
    ...(v.certificate ? { vehicle: v.certificate } : {}),
    plate: v.plate,
    vin: v.vin,
  }),

  issue(_ctx, cat, row, receipt) {
    const d = row.details;
    const fields = {
      country: d.country,
      validity: d.validity,
      plate_number: d.vehicle.plate,
      car_model: d.vehicle.carModel,
      vin: d.vehicle.vin,
      registration_country: d.vehicle.registrationCountry,
      document_number: receipt.series,
      transaction_id: receipt.transactionId,
      start_date: row.start_date!,
      end_date: row.end_date!,
      ...issuedPrice(d, row.price),
    };
    const c = cat.countries.find((x) => x.code === d.country);
    const option = c?.options.find((o) => o.id === d.validity);
    return issued(fields, `Vinietă electronică ${c?.name.RO ?? d.country}`, [
      { label: 'Număr document', value: fields.document_number },
      { label: 'Număr tranzacție', value: fields.transaction_id },
      { label: 'Țara de destinație', value: `${c?.name.RO ?? d.country} (${d.country})` },
      { label: 'Valabilitate', value: `${option?.label.RO ?? d.validity} (${d.duration} zile)` },
      { label: 'Valabilă', value: periodText(row) },
      { label: 'Titular', value: d.holder },
      { label: 'Număr de înmatriculare', value: fields.plate_number },
      { label: 'Țara de înmatriculare', value: fields.registration_country },
      { label: 'Vehicul', value: fields.car_model || '—' },
      { label: 'VIN', value: fields.vin },
      {
        label: 'Categoria / clasa',
        value: `${d.vehicle.profile.category}${c?.tiered ? ` / ${d.vehicle_class}` : ''}`,
      },
      ...priceLines('Tarif de referință', fields, row.price, [
        { label: 'Comision', value: formatAmount(d.fee, 'MDL') },
      ]),
    ]);
  },
});
