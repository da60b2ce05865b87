import { Type, type Static } from '@sinclair/typebox';
import { productRule } from '../domain/errors.ts';
import { baniToMdl, formatAmount } from '../domain/money.ts';
import { endDateForMonths, formatDmy } from '../domain/time.ts';
import type { RegisteredVehicle } from '../providers/types.ts';
import { Amount, finalPrice, minorOf } from './pricing.ts';
import { issued, periodText, vehicleFields, vehicleProperties, type VehicleItem } from './fields.ts';
import { carModel, insuredVehicle, S } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * Moldovan road usage tax for an MD-registered vehicle, paid for its registered owner (`idnx`).
 * Annual: cars and motorcycles by engine size, other vehicle types at a flat rate, in MDL. The
 * tax covers 12 months from the day it is paid (as at the yearly technical inspection), so
 * nobody pays a full year's tax for the last weeks of a calendar year.
 */
const CatalogueSchema = Type.Object({
  max_interval: Type.Integer({ minimum: 0 }),
  period_months: Type.Integer({ minimum: 1, maximum: 24 }),
  fee_mdl: Amount,
  engine_tariffs: Type.Record(
    Type.String(),
    Type.Array(Type.Object({ max_cc: Type.Integer({ minimum: 0 }), tax: Amount }), { minItems: 1 }),
  ),
  type_tariffs: Type.Record(Type.String(), Amount),
});
type RoadTaxCatalogue = Static<typeof CatalogueSchema>;

const quoteSchema = Type.Object({ vehicle: S.vehicle(), idnx: S.idnx() });
const orderSchema = Type.Object({
  vehicle: S.vehicle(),
  idnx: S.idnx(),
  contractor_full_name: S.text(),
  locality_id: Type.Integer({ minimum: 1, maximum: 9_999_999, description: 'CUATM code of the locality' }),
  locality_name: S.text(100),
  region: S.text(100),
});

/** The annual tax in bani for the vehicle's type and engine. */
function annualTax(cat: RoadTaxCatalogue, v: RegisteredVehicle): number {
  const tiers = cat.engine_tariffs[v.category];
  if (tiers) {
    const tier = tiers.find((t) => v.engineCc <= t.max_cc);
    if (tier) return minorOf(tier.tax);
  }
  const flat = cat.type_tariffs[v.category];
  if (!flat) throw productRule(`Road tax is not collected for vehicle category ${v.category}`);
  return minorOf(flat);
}

/**
 * The one pricing function of quote and create-order: the owner's vehicle, the tax + service fee +
 * partner margin, and the period from today that it covers.
 */
async function roadTaxFor(
  ctx: ProductContext,
  cat: RoadTaxCatalogue,
  req: { vehicle: string; idnx: string },
) {
  const v = await insuredVehicle(ctx, req.vehicle, req.idnx);
  if (v.owner.idnx !== req.idnx) throw productRule('idnx is not the registered owner of the vehicle');
  const tax = annualTax(cat, v);
  return {
    v,
    tax,
    price: finalPrice(ctx, tax + minorOf(cat.fee_mdl)),
    start: ctx.today,
    end: endDateForMonths(ctx.today, cat.period_months),
  };
}

const offerFields = { car_model: Type.String(), plate_number: Type.String() };
const issuedFields = {
  ...vehicleProperties,
  vin_code: Type.String(),
  start_date: Type.String(),
  end_date: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
};

interface RoadTaxDetails extends VehicleItem<typeof orderSchema> {
  /** The annual tax in bani. */
  tax: number;
}

export const roadTax = defineProduct<RoadTaxDetails>()('road-tax', CatalogueSchema, {
  idPrefix: 'TFD',
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },

  async quote(ctx, cat, req) {
    const { v, price, start, end } = await roadTaxFor(ctx, cat, req);
    return {
      offers: [
        {
          product: 'road-tax',
          name: `Taxa de drum ${formatDmy(start)} – ${formatDmy(end)}, ${carModel(v)} ${v.plate}`,
          car_model: carModel(v),
          plate_number: v.plate,
          price: baniToMdl(price),
          currency: 'MDL',
          min_start_date: start,
          max_interval: cat.max_interval,
        },
      ],
    };
  },

  async price(ctx, cat, item) {
    const { v, tax, price, start, end } = await roadTaxFor(ctx, cat, item);
    return {
      price,
      description: `Taxa de drum, ${carModel(v)} ${v.plate}`,
      startDate: start,
      endDate: end,
      details: { request: item, vehicle: v, tax },
    };
  },

  cover: ({ details: d }) => ({ vehicle: d.vehicle.certificate }),

  issue(_ctx, _cat, row, receipt) {
    const d = row.details;
    const { request: r, vehicle: v } = d;
    const fields = {
      ...vehicleFields(v),
      // Absent, not empty or invented, when the registry holds no VIN or chassis number (decision 0044).
      ...(v.vin ? { vin_code: v.vin } : {}),
      start_date: row.start_date!,
      end_date: row.end_date!,
      price: baniToMdl(row.price),
      currency: 'MDL',
    };
    return issued(fields, 'Confirmare de plată a taxei pentru folosirea drumurilor', [
      { label: 'Număr tranzacție', value: receipt.transactionId },
      { label: 'Plătitor', value: r.contractor_full_name },
      { label: 'IDNP/IDNO', value: r.idnx },
      { label: 'Localitatea', value: `${r.locality_name} (CUATM ${r.locality_id}), ${r.region}` },
      { label: 'Număr de înmatriculare', value: v.plate },
      { label: 'Vehicul', value: `${fields.car_model} (categoria ${v.category}, ${v.engineCc} cm³)` },
      { label: 'VIN', value: v.vin ?? '—' },
      { label: 'Perioada', value: periodText(row) },
      { label: 'Taxa anuală', value: formatAmount(d.tax, 'MDL') },
      { label: 'Preț', value: formatAmount(row.price, 'MDL') },
    ]);
  },
});
