import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { endDateForDays } from '../domain/time.ts';
import type { RegisteredVehicle } from '../providers/types.ts';
import {
  Amount,
  Coefficient,
  convertedPrice,
  minorOf,
  mulCoefficient,
  type StoredConversion,
  storedConversion,
  storedReference,
} from './pricing.ts';
import {
  issued,
  issuedPrice,
  offerPrice,
  periodText,
  policyLines,
  priceLines,
  type VehicleItem,
} from './fields.ts';
import { priceProperties, vehicleFields, vehicleLines, vehicleProperties } from './fields.ts';
import { carModel, insuredVehicle, insurerName, offerWindow, requireWindowStart, S } from './shared.ts';
import { StartWindow } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * Green card (Carte Verde): international motor liability for an MD vehicle, zone EU or UA.
 * The premium is a national tariff in EUR per zone and duration (every insurer sells at it),
 * times the vehicle category's multiplier, charged in MDL at the catalogue rate.
 */
export const GREEN_CARD_DURATIONS = [15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 330, 365] as const;
const REGIONS = ['EU', 'UA'] as const;

const CatalogueSchema = Type.Object({
  ...StartWindow,
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  fee_mdl: Amount,
  regions: Type.Object(
    Object.fromEntries(
      REGIONS.map((r) => [
        r,
        Type.Object({
          label: Type.String(),
          tariffs: Type.Object(Object.fromEntries(GREEN_CARD_DURATIONS.map((d) => [String(d), Amount]))),
        }),
      ]),
    ),
  ),
  category_multipliers: Type.Record(Type.String(), Coefficient),
  insurers: Type.Array(Type.String(), { minItems: 1 }),
});
type GreenCardCatalogue = Static<typeof CatalogueSchema>;
type Region = (typeof REGIONS)[number];

const Duration = Type.Union(
  GREEN_CARD_DURATIONS.map((d) => Type.Literal(d)),
  { description: `Days. Allowed: ${GREEN_CARD_DURATIONS.join(', ')}` },
);
const RegionSchema = Type.Union(
  REGIONS.map((r) => Type.Literal(r)),
  { description: 'EU or UA' },
);

const quoteSchema = Type.Object({
  region: RegionSchema,
  duration: Duration,
  vehicle: S.vehicle(),
  idnx: S.idnx(),
});
const orderSchema = Type.Object({
  vehicle: S.vehicle(),
  start_date: S.date(),
  duration: Duration,
  region: RegionSchema,
  insurance_company: Type.String({ minLength: 1, maxLength: 50, description: 'The offer `company`' }),
  idnx: S.idnx(),
});

function multiplier(cat: GreenCardCatalogue, v: RegisteredVehicle): string {
  const m = cat.category_multipliers[v.category];
  if (!m) throw productRule(`Green card is not sold for vehicle category ${v.category}`);
  return m;
}

/** The one pricing function of quote and create-order. */
function greenCardPrice(
  ctx: ProductContext,
  cat: GreenCardCatalogue,
  v: RegisteredVehicle,
  region: Region,
  duration: number,
) {
  const tariff = cat.regions[region]!.tariffs[String(duration)]!;
  const reference = mulCoefficient(minorOf(tariff), multiplier(cat, v));
  return convertedPrice(ctx, reference, cat.currency, cat.fee_mdl);
}

const regionLabel = (cat: GreenCardCatalogue, region: Region) => cat.regions[region]!.label;

const offerFields = { company: Type.String(), duration: Type.Integer() };
const issuedFields = { ...vehicleProperties, validity: Type.Number(), ...priceProperties };

interface GreenCardDetails extends VehicleItem<typeof orderSchema>, StoredConversion {}

export const greenCard = defineProduct<GreenCardDetails>()('green-card', CatalogueSchema, {
  idPrefix: 'IAE',
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },

  async quote(ctx, cat, req) {
    const v = await insuredVehicle(ctx, req.vehicle, req.idnx);
    const p = greenCardPrice(ctx, cat, v, req.region, req.duration);
    const offers = cat.insurers.map((company) => ({
      product: 'green-card',
      name: `Carte Verde ${req.duration} zile, ${regionLabel(cat, req.region)}, ${insurerName(ctx, company)}, ${carModel(v)} ${v.plate}`,
      company,
      duration: req.duration,
      ...offerPrice(p, p.price),
      ...offerWindow(ctx, cat),
    }));
    return { offers };
  },

  async price(ctx, cat, item) {
    const [v] = await checkAll(
      () => insuredVehicle(ctx, item.vehicle, item.idnx),
      () => {
        if (!cat.insurers.includes(item.insurance_company))
          throw productRule(`Unknown insurance_company ${item.insurance_company}`);
      },
      () => requireWindowStart(ctx, cat, item.start_date),
    );
    const p = greenCardPrice(ctx, cat, v, item.region, item.duration);
    return {
      price: p.price,
      description: `Asigurare Carte Verde, ${item.duration} zile, ${regionLabel(cat, item.region)}, ${carModel(v)} ${v.plate}`,
      startDate: item.start_date,
      endDate: endDateForDays(item.start_date, item.duration),
      details: {
        request: item,
        vehicle: v,
        ...storedConversion(ctx, p),
      },
    };
  },

  cover: ({ details: d }) => ({ vehicle: d.vehicle.certificate, company: d.request.insurance_company }),

  issue(ctx, cat, row, receipt) {
    const d = row.details;
    const { request, vehicle: v } = d;
    const fields = {
      ...vehicleFields(v),
      validity: request.duration,
      ...issuedPrice(storedReference(d), row.price),
    };
    return issued(fields, 'Certificat internațional de asigurare auto „Carte Verde”', [
      ...policyLines(receipt, insurerName(ctx, request.insurance_company)),
      { label: 'Zona de acoperire', value: regionLabel(cat, request.region) },
      ...vehicleLines(v, `${fields.car_model} (categoria ${v.category})`),
      { label: 'Asigurat (IDNP/IDNO)', value: request.idnx },
      { label: 'Valabilitate', value: `${request.duration} zile` },
      { label: 'Perioada', value: periodText(row) },
      ...priceLines('Primă de referință', fields, row.price),
    ]);
  },
});
