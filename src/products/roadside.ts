import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { endDateForDays, endDateForMonths } from '../domain/time.ts';
import type { RegisteredVehicle } from '../providers/types.ts';
import { EU_CATEGORIES } from '../domain/vehicle.ts';
import { OneOfLiterals, StringEnum } from './enums.ts';
import { Amount, eurPrice, FeeSchema } from './pricing.ts';
import { issued, issuedPrice, periodText, offerPrice, priceLines, priceProperties } from './fields.ts';
import { vehicleFields, vehicleProperties, type Reference } from './fields.ts';
import { carModel, offerWindow, requireVehicle, requireWindowStart, S } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * European roadside assistance for an MD-registered car. Only passenger cars (EU M1, "category A")
 * up to 3.5 t are covered; the registered owner is the contract holder. Issued asynchronously.
 */
const PERIODS = ['15_days', '12_months', '12_months_plus'] as const;

const CatalogueSchema = Type.Object({
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  /** "Today + 48 hours" is the local date two days on (decision 0009). */
  min_start_offset_days: Type.Integer({ minimum: 0 }),
  max_interval: Type.Integer({ minimum: 0 }),
  fee: FeeSchema,
  eligibility: Type.Object({
    categories: Type.Array(OneOfLiterals(EU_CATEGORIES), { minItems: 1 }),
    max_mass_kg: Type.Integer({ minimum: 1 }),
  }),
  periods: Type.Array(
    Type.Intersect([
      Type.Object({
        id: OneOfLiterals(PERIODS),
        label: Type.String(),
        coverage: Type.String(),
        tariff: Amount,
      }),
      Type.Union([
        Type.Object({ days: Type.Integer({ minimum: 1 }) }),
        Type.Object({ months: Type.Integer({ minimum: 1 }) }),
      ]),
    ]),
    { minItems: 1 },
  ),
});
type RoadsideCatalogue = Static<typeof CatalogueSchema>;
type PeriodEntry = RoadsideCatalogue['periods'][number];

const quoteSchema = Type.Object({ vehicle: S.vehicle() });
const orderSchema = Type.Object({
  vehicle: S.vehicle(),
  start_date: S.date('yyyy-mm-dd, from today + 2 days to 60 days after that'),
  period: StringEnum(PERIODS, 'From get-offers'),
});
type RoadsideOrder = Static<typeof orderSchema>;

const eligible = (cat: RoadsideCatalogue, v: RegisteredVehicle) =>
  cat.eligibility.categories.includes(v.category) && v.maxMassKg <= cat.eligibility.max_mass_kg;

const priceOf = (ctx: ProductContext, cat: RoadsideCatalogue, p: PeriodEntry) =>
  eurPrice(ctx, p.tariff, cat.currency, cat.fee);

const endDate = (start: string, p: PeriodEntry) =>
  'days' in p ? endDateForDays(start, p.days) : endDateForMonths(start, p.months);

const offerFields = { period: Type.String(), car_model: Type.String(), plate_number: Type.String() };
const issuedFields = {
  ...vehicleProperties,
  period: Type.String(),
  coverage: Type.String(),
  vin_code: Type.String(),
  start_date: Type.String(),
  end_date: Type.String(),
  ...priceProperties,
};

interface RoadsideDetails extends Reference {
  request: RoadsideOrder;
  vehicle: RegisteredVehicle;
  coverage: string;
  label: string;
}

export const roadside = defineProduct<RoadsideDetails>()('roadside-assistance-eu', CatalogueSchema, {
  idPrefix: 'RSA',
  asyncIssue: true,
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },

  async quote(ctx, cat, req) {
    const v = await requireVehicle(ctx, req.vehicle);
    if (!eligible(cat, v)) return { offers: [] };
    const offers = cat.periods.map((p) => {
      const price = priceOf(ctx, cat, p);
      return {
        product: 'roadside-assistance-eu',
        name: `Asistență rutieră Europa, ${p.label}, ${p.coverage}, ${carModel(v)} ${v.plate}`,
        ...offerPrice(price, price.price),
        ...offerWindow(ctx, cat),
        period: p.id,
        car_model: carModel(v),
        plate_number: v.plate,
      };
    });
    return { offers };
  },

  async price(ctx, cat, item) {
    const [v, p] = await checkAll(
      async () => {
        const found = await requireVehicle(ctx, item.vehicle);
        if (!eligible(cat, found)) {
          throw productRule(
            `Roadside assistance covers only category A (M1) vehicles up to ${cat.eligibility.max_mass_kg} kg; ` +
              `${found.plate} is ${found.category}, ${found.maxMassKg} kg`,
          );
        }
        return found;
      },
      () => {
        const period = cat.periods.find((x) => x.id === item.period);
        if (!period) throw productRule(`Period ${item.period} is not on sale`);
        return period;
      },
      () => requireWindowStart(ctx, cat, item.start_date),
    );
    const price = priceOf(ctx, cat, p);
    const details: RoadsideDetails = {
      request: item,
      vehicle: v,
      coverage: p.coverage,
      label: p.label,
      reference_price: price.reference_price,
      reference_exchange_rate: price.reference_exchange_rate,
    };
    return {
      price: price.price,
      description: `Asistență rutieră Europa, ${p.label}, ${carModel(v)} ${v.plate}`,
      startDate: item.start_date,
      endDate: endDate(item.start_date, p),
      details,
    };
  },

  cover: ({ details: { vehicle: v } }) => ({
    vehicle: v.certificate,
    plate: v.plate,
    ...(v.vin ? { vin: v.vin } : {}),
  }),

  issue(_ctx, _cat, row, receipt) {
    const d = row.details;
    const v = d.vehicle;
    const fields = {
      ...vehicleFields(v),
      period: d.request.period,
      coverage: d.coverage,
      // Roadside help needs no VIN; a car the registry holds none for still gets its contract,
      // without the field (decision 0044).
      ...(v.vin ? { vin_code: v.vin } : {}),
      start_date: row.start_date!,
      end_date: row.end_date!,
      ...issuedPrice(d, row.price),
    };
    return issued(fields, 'Contract de asistență rutieră Europa', [
      { label: 'Număr contract', value: receipt.series },
      { label: 'Număr tranzacție', value: receipt.transactionId },
      { label: 'Titular (proprietar înregistrat)', value: `${v.owner.name}, ${v.owner.idnx}` },
      { label: 'Număr de înmatriculare', value: fields.plate_number },
      { label: 'Vehicul', value: fields.car_model },
      { label: 'Număr certificat', value: v.certificate },
      { label: 'VIN', value: v.vin ?? '—' },
      { label: 'Perioada', value: `${d.label} (${fields.period})` },
      { label: 'Acoperire', value: fields.coverage },
      { label: 'Valabil', value: periodText(row) },
      ...priceLines('Tarif de referință', fields, row.price),
    ]);
  },
});
