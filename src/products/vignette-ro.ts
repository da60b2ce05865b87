import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { baniToMdl, convertToBani, formatAmount, formatRate, parseRate } from '../domain/money.ts';
import {
  activeVignetteMessage,
  DEFAULT_INSTANTS,
  EMISSION_CLASSES,
  foreignVehicleProblem,
  localWallInstant,
  NO_VIGNETTE,
  NO_VIN,
  regimeAt,
  resolveEmissionClass,
  TARIFF_CHANGED,
  tariffsFor,
  vignetteCategories,
  VIN_PATTERN,
  type EmissionClass,
  type Regime,
  type RoVehicle,
} from '../domain/ro-vignette.ts';
import { addDays, endDateForDays, formatDmy } from '../domain/time.ts';
import { EU_CATEGORIES, normalisePlate } from '../domain/vehicle.ts';
import { OneOfLiterals } from './enums.ts';
import { Amount, finalPrice, minorOf, rateOf, rateText, toBani } from './pricing.ts';
import { issued, priceLines } from './fields.ts';
import { carModel, correctVignette, requireStartDate, requireVehicle, S } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * The Romanian road vignette (rovinieta), under the tariff system before and after
 * 1 October 2026 and the emission-class restriction of 25 September 2026 (decision 0010).
 * Sold in EUR, charged by the supplier in RON at a monthly rate, and by the service in MDL.
 */
const Rate = Type.String({ pattern: '^[0-9]+\\.[0-9]{1,4}$' });
const Labels = Type.Record(Type.String({ pattern: '^[A-H]$' }), Type.String({ minLength: 1 }));
const ByClass = Type.Object({
  E0: Amount,
  E1: Amount,
  E2: Amount,
  E3: Amount,
  E4: Amount,
  E5: Amount,
  E6: Amount,
  EC: Amount,
});
const CatalogueSchema = Type.Object({
  max_interval: Type.Integer({ minimum: 0 }),
  /** Local Europe/Chisinau instants of the two changes; decision 0010's defaults when absent. */
  regimes: Type.Optional(
    Type.Object({
      emission_restriction_from: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$' }),
      new_tariff_from: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$' }),
    }),
  ),
  /**
   * Classes a customer's declaration can buy while only E0/EC are sold; [] is the contract's current
   * rule, a valid declared class ignored (docs/api-reference.md#vignettero, decision 0010).
   */
  declared_classes_sold: Type.Array(Type.Union(EMISSION_CLASSES.map((c) => Type.Literal(c)))),
  /** The supplier's monthly EUR → RON rate. */
  eur_ron_rate: Rate,
  old_categories: Labels,
  new_categories: Labels,
  emission_standard_names: Type.Object(
    Object.fromEntries(EMISSION_CLASSES.map((c) => [c, Type.String({ minLength: 1 })])),
  ),
  old_tariffs: Type.Record(Type.String(), Type.Record(Type.String({ pattern: '^[0-9]+$' }), Amount)),
  /** A tariff for every class of every category and duration, so selling a class is configuration. */
  new_tariffs: Type.Record(Type.String(), Type.Record(Type.String({ pattern: '^[0-9]+$' }), ByClass)),
});
type RoCatalogue = Static<typeof CatalogueSchema>;

const foreignBase = {
  registration_country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO2, not MD' }),
  category: OneOfLiterals(EU_CATEGORIES, { description: 'EU vehicle category' }),
  max_authorized_mass: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, description: 'kg; required for N1–N3 and O1–O4' }),
  ),
  places: Type.Optional(Type.Integer({ minimum: 1, description: 'Seats; required for M2 and M3' })),
};
const Plate = (description: string) =>
  Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,13}[A-Za-z0-9]$', description });
const Vin = (description: string) => Type.String({ pattern: VIN_PATTERN, description });
const emissionFields = {
  emission_class: Type.Optional(
    Type.String({ description: 'E0–E6 or EC, case-insensitive; omitted means E0' }),
  ),
  emission_proof_declared: Type.Optional(
    Type.Boolean({ description: 'true when the customer holds a document proving the class' }),
  ),
};

const quoteSchema = Type.Object({
  vehicle: Type.Optional(S.vehicle()),
  foreign_vehicle: Type.Optional(
    Type.Object({
      ...foreignBase,
      plate_number: Type.Optional(Plate('Enables the active-vignette check')),
      vin: Type.Optional(Vin('17 characters, ISO 3779; enables the active-vignette check')),
    }),
  ),
  ...emissionFields,
});
const orderSchema = Type.Object({
  vehicle: Type.Optional(S.vehicle()),
  foreign_vehicle: Type.Optional(
    Type.Object({
      ...foreignBase,
      plate_number: Plate('Real plate; internal spaces are kept for AT and DE'),
      vin: Vin('17 characters, ISO 3779 (no I, O, Q)'),
      make: Type.Optional(S.text(60)),
      model: Type.Optional(S.text(60)),
    }),
  ),
  start_date: S.date(),
  duration: Type.Integer({ description: 'Days, from get-offers' }),
  category: Type.String({ minLength: 1, maxLength: 10, description: 'From get-offers' }),
  ...emissionFields,
});
type QuoteRequest = Static<typeof quoteSchema>;
type OrderRequest = Static<typeof orderSchema>;

/** The vehicle as pricing resolved it; stored with the order and read back at issuance. */
interface Vehicle {
  rules: RoVehicle;
  country: string;
  euCategory: string;
  certificate?: string;
  plate?: string;
  vin?: string;
  /** `HONDA CIVIC CHY999`: make, model and plate as far as known. */
  text: string;
}

interface Details {
  request: OrderRequest;
  vehicle: Vehicle;
  regime: Regime;
  category: string;
  category_label: string;
  emission_class: EmissionClass;
  duration: number;
  reference_ron_bani: number;
  eur_ron_rate: string;
  ron_mdl_rate: string;
}

const regimeOf = (cat: RoCatalogue, at: number) => regimeAt(at, cat.regimes ?? DEFAULT_INSTANTS);
const labels = (cat: RoCatalogue, r: Regime) => (r.newTariff ? cat.new_categories : cat.old_categories);

async function resolveVehicle(ctx: ProductContext, req: QuoteRequest | OrderRequest): Promise<Vehicle> {
  if ((req.vehicle === undefined) === (req.foreign_vehicle === undefined)) {
    throw productRule('Provide exactly one of vehicle or foreign_vehicle');
  }
  if (req.vehicle !== undefined) {
    const v = await requireVehicle(ctx, req.vehicle);
    return {
      rules: {
        md: true,
        euCategory: v.category,
        massKg: v.maxMassKg,
        seats: v.seats,
        year: v.year,
        electric: v.fuel === 'electric',
      },
      country: 'MD',
      euCategory: v.category,
      certificate: v.certificate,
      plate: v.plate,
      ...(v.vin ? { vin: v.vin } : {}),
      text: `${carModel(v)} ${v.plate}`,
    };
  }
  const f = req.foreign_vehicle!;
  const country = f.registration_country.toUpperCase();
  if (country === 'MD') throw productRule('foreign_vehicle.registration_country must not be MD');
  const problem = foreignVehicleProblem(f);
  if (problem) throw productRule(problem);
  const plate =
    f.plate_number !== undefined ? normalisePlate(f.plate_number, country, { keepHyphens: true }) : undefined;
  const named = 'make' in f ? [f.make, f.model].filter(Boolean).join(' ').toUpperCase() : '';
  return {
    rules: {
      md: false,
      euCategory: f.category,
      ...(f.max_authorized_mass !== undefined ? { massKg: f.max_authorized_mass } : {}),
      ...(f.places !== undefined ? { seats: f.places } : {}),
      electric: false,
    },
    country,
    euCategory: f.category,
    ...(plate ? { plate } : {}),
    ...(f.vin ? { vin: f.vin.toUpperCase() } : {}),
    text: [named, plate].filter(Boolean).join(' '),
  };
}

/**
 * The checks shared by get-offers and create-order, in the contract's order
 * (docs/api-reference.md#vignettero): vehicle, class, VIN.
 */
async function assess(ctx: ProductContext, cat: RoCatalogue, req: QuoteRequest | OrderRequest) {
  const regime = regimeOf(cat, ctx.now);
  const vehicle = await resolveVehicle(ctx, req);
  const cls = resolveEmissionClass(req, vehicle.rules, regime, cat.declared_classes_sold);
  if (regime.newTariff && vehicle.rules.md && !vehicle.vin) throw productRule(NO_VIN);
  const categories = vignetteCategories(vehicle.rules, regime.newTariff);
  let minStart = ctx.today;
  let message = '';
  if (categories.length && (vehicle.plate || vehicle.vin)) {
    const active = await ctx.providers.roVignettes.findActive({
      country: vehicle.country,
      today: ctx.today,
      ...(ctx.correcting ? { exceptOrder: ctx.correcting } : {}),
      ...(vehicle.plate ? { plate: vehicle.plate } : {}),
      ...(vehicle.vin ? { vin: vehicle.vin } : {}),
    });
    if (active) {
      message = activeVignetteMessage(active);
      const after = addDays(active.endDate, 1);
      if (after > minStart) minStart = after;
    }
  }
  return { regime, vehicle, cls, categories, minStart, message };
}

function amounts(ctx: ProductContext, cat: RoCatalogue, eur: string) {
  const ron = convertToBani(minorOf(eur), parseRate(cat.eur_ron_rate));
  const price = finalPrice(ctx, toBani(ctx, ron, 'RON'));
  return { ron, price };
}

const rateRonMdl = (ctx: ProductContext) => formatRate(rateOf(ctx, 'RON'));

const offerFields = {
  category: Type.String(),
  duration: Type.Integer(),
  external_category: Type.String(),
  emission_class: Type.String(),
  message: Type.String(),
};
const issuedFields = {
  vignette_series: Type.String(),
  plate_number: Type.String(),
  vehicle_category: Type.String(),
  vin_code: Type.String(),
  emission_class: Type.String(),
  emission_standard_name: Type.String(),
  country: Type.String(),
  transaction_id: Type.String(),
  start_date: Type.String(),
  end_date: Type.String(),
  validity: Type.String(),
  reference_price: Type.String(),
  reference_exchange_rate: Type.String(),
  supplier_exchange_rate: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
};

export const vignetteRo = defineProduct<Details>()('vignette:ro', CatalogueSchema, {
  idPrefix: 'ROV',
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },

  async quote(ctx, cat, req) {
    const a = await assess(ctx, cat, req);
    const names = labels(cat, a.regime);
    const offers = a.categories.flatMap((c) =>
      tariffsFor({ old: cat.old_tariffs, new: cat.new_tariffs }, a.regime.newTariff, c, a.cls).map((t) => {
        const { ron, price } = amounts(ctx, cat, t.eur);
        return {
          product: 'vignette:ro',
          name: [`${t.duration} zile`, `(${c}-${names[c] ?? c})`, a.vehicle.text].filter(Boolean).join(', '),
          category: c,
          duration: t.duration,
          external_category: a.vehicle.euCategory,
          ...(a.regime.newTariff ? { emission_class: a.cls } : {}),
          price: baniToMdl(price),
          currency: 'MDL',
          reference_price: formatAmount(ron, 'RON'),
          reference_exchange_rate: rateText(ctx, 'RON'),
          min_start_date: a.minStart,
          max_interval: cat.max_interval,
          message: a.message,
        };
      }),
    );
    return { offers };
  },

  async price(ctx, cat, item) {
    const a = await assess(ctx, cat, item);
    const category = item.category.trim().toUpperCase();
    const tariff = a.categories.includes(category)
      ? tariffsFor({ old: cat.old_tariffs, new: cat.new_tariffs }, a.regime.newTariff, category, a.cls).find(
          (t) => t.duration === item.duration,
        )
      : undefined;
    // Both read what the vehicle decided, not each other: refused together (decision 0098).
    const [sold] = await checkAll(
      () => {
        if (!tariff) throw productRule(NO_VIGNETTE);
        return tariff;
      },
      () => requireStartDate(item.start_date, a.minStart, cat.max_interval),
    );
    const { ron, price } = amounts(ctx, cat, sold.eur);
    const details: Details = {
      request: item,
      vehicle: a.vehicle,
      regime: a.regime,
      category,
      category_label: labels(cat, a.regime)[category] ?? category,
      emission_class: a.cls,
      duration: item.duration,
      reference_ron_bani: ron,
      eur_ron_rate: formatRate(parseRate(cat.eur_ron_rate)),
      ron_mdl_rate: rateRonMdl(ctx),
    };
    return {
      price,
      description: `Rovinieta, ${item.duration} zile, Categoria ${category}, ${a.vehicle.text}`.replace(
        /, $/,
        '',
      ),
      startDate: item.start_date,
      endDate: endDateForDays(item.start_date, item.duration),
      details,
    };
  },

  payableWindow(ctx, cat) {
    // The price and category were set under the tariff of creation time; they die with it.
    const change = localWallInstant((cat.regimes ?? DEFAULT_INSTANTS).new_tariff_from);
    return ctx.now >= change
      ? { from: change, until: Infinity, reason: TARIFF_CHANGED }
      : { from: -Infinity, until: change, reason: TARIFF_CHANGED };
  },

  correct({ details: { request } }, changes) {
    return correctVignette(request, changes);
  },

  cover: ({ details: { vehicle: v } }) => ({
    ...(v.certificate ? { vehicle: v.certificate } : {}),
    ...(v.plate ? { plate: v.plate } : {}),
    ...(v.vin ? { vin: v.vin } : {}),
  }),

  issue(_ctx, cat, row, receipt) {
    const d = row.details;
    const v = d.vehicle;
    const start = row.start_date!;
    const end = row.end_date!;
    // What the regime of the order decided is stored now, so the vignette reads back the same later.
    const after = d.regime.newTariff;
    const fields = {
      vignette_series: receipt.series,
      plate_number: v.plate ?? '',
      vehicle_category: `${d.category}-${d.category_label}`,
      // Absent when the registry holds no VIN, which only the old regime sells to (decision 0044).
      ...(v.vin ? { vin_code: v.vin } : {}),
      ...(after
        ? {
            emission_class: d.emission_class,
            emission_standard_name: cat.emission_standard_names[d.emission_class] ?? d.emission_class,
          }
        : {}),
      country: v.country,
      transaction_id: receipt.transactionId,
      start_date: `${start} 00:00:00`,
      end_date: `${end} 23:59:59`,
      validity: `${d.duration} zile`,
      reference_price: formatAmount(d.reference_ron_bani, 'RON'),
      reference_exchange_rate: `1 RON ${d.ron_mdl_rate} MDL`,
      ...(after ? {} : { supplier_exchange_rate: `1 EUR ${d.eur_ron_rate} RON` }),
      price: baniToMdl(row.price),
      currency: 'MDL',
    };
    const doc = [
      { label: 'Serie rovinietă', value: fields.vignette_series },
      { label: 'Număr tranzacție', value: fields.transaction_id },
      { label: 'Număr de înmatriculare', value: fields.plate_number },
      { label: 'Țara de înmatriculare', value: fields.country },
      { label: 'Vehicul', value: v.text },
      { label: 'Categoria', value: fields.vehicle_category },
      { label: 'VIN', value: v.vin ?? '—' },
      ...(after
        ? [{ label: 'Clasa de emisii', value: `${d.emission_class} (${fields.emission_standard_name})` }]
        : []),
      { label: 'Valabilitate', value: fields.validity },
      { label: 'Perioada', value: `${formatDmy(start)} 00:00:00 – ${formatDmy(end)} 23:59:59` },
      ...priceLines(
        'Preț de referință',
        fields,
        row.price,
        after ? [] : [{ label: 'Curs furnizor', value: fields.supplier_exchange_rate! }],
      ),
    ];
    return issued(fields, 'Rovinietă România', doc);
  },
});
