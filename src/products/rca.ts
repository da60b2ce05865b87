import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { baniToMdl, parseDecimal } from '../domain/money.ts';
import { endDateForDays } from '../domain/time.ts';
import type { RegisteredVehicle } from '../providers/types.ts';
import { Amount, Coefficient, finalPrice, mulCoefficient, convertedReference } from './pricing.ts';
import {
  issued,
  issuedPrice,
  periodText,
  policyLines,
  priceLines,
  vehicleLines,
  type VehicleItem,
} from './fields.ts';
import { priceProperties, vehicleFields, vehicleProperties } from './fields.ts';
import { carModel, insuredVehicle, insurerName, offerWindow, requireWindowStart, S } from './shared.ts';
import { StartWindow } from './shared.ts';
import { defineProduct } from './types.ts';

/**
 * RCA, Moldovan motor third-party liability, one year. Premium = the insurer's base premium ×
 * vehicle coefficient (category, engine) × home-zone coefficient × bonus-malus coefficient.
 */
const CatalogueSchema = Type.Object({
  ...StartWindow,
  durations: Type.Array(Type.Integer()),
  insurers: Type.Array(Type.Object({ company: Type.String(), base_premium: Amount }), { minItems: 1 }),
  vehicle_coefficients: Type.Record(
    Type.String(),
    Type.Array(Type.Object({ max_cc: Type.Integer(), coefficient: Coefficient })),
  ),
  electric_coefficient: Coefficient,
  zone_coefficients: Type.Record(Type.String(), Coefficient),
  bonus_malus: Type.Array(Coefficient, { minItems: 1 }),
});
type RcaCatalogue = Static<typeof CatalogueSchema>;

const quoteSchema = Type.Object({
  duration: Type.Literal(365, { description: 'Days. Allowed: 365' }),
  vehicle: S.vehicle(),
  idnx: S.idnx(),
});
const orderSchema = Type.Object({
  vehicle: S.vehicle(),
  start_date: S.date(),
  duration: Type.Literal(365),
  insurance_company: Type.String({ minLength: 1, description: 'The offer `company`' }),
  idnx: S.idnx(),
});

function vehicleCoefficient(cat: RcaCatalogue, v: RegisteredVehicle): string {
  if (v.fuel === 'electric') return cat.electric_coefficient;
  const tiers = cat.vehicle_coefficients[v.category];
  const tier = tiers?.find((t) => v.engineCc <= t.max_cc);
  if (!tier) throw productRule(`RCA is not sold for vehicle category ${v.category}`);
  return tier.coefficient;
}

/** The sandbox's bonus-malus class, derived from the owner's number as a registry lookup would. */
function bonusMalus(cat: RcaCatalogue, idnx: string): string {
  const sum = [...idnx].reduce((s, d) => s + Number(d), 0);
  return cat.bonus_malus[sum % cat.bonus_malus.length]!;
}

/** The premium of each insurer for one vehicle and owner: base premium × vehicle × zone × bonus-malus. */
function premiums(cat: RcaCatalogue, v: RegisteredVehicle, idnx: string) {
  const zone = cat.zone_coefficients[v.owner.locality] ?? cat.zone_coefficients.default ?? '1.00';
  const coefficients = [vehicleCoefficient(cat, v), zone, bonusMalus(cat, idnx)];
  return (company: { base_premium: string }): number =>
    coefficients.reduce(mulCoefficient, parseDecimal(company.base_premium, 2));
}

const offerFields = { company: Type.String(), duration: Type.Integer() };
const issuedFields = { ...vehicleProperties, ...priceProperties };

interface RcaDetails extends VehicleItem<typeof orderSchema> {
  /** Bani, before the partner margin. */
  base_premium: number;
}

export const rca = defineProduct<RcaDetails>()('rca', CatalogueSchema, {
  idPrefix: 'IAI',
  schemas: { quote: quoteSchema, order: orderSchema, offer: offerFields, issued: issuedFields },

  async quote(ctx, cat, req) {
    const v = await insuredVehicle(ctx, req.vehicle, req.idnx);
    const premium = premiums(cat, v, req.idnx);
    const vehicle = `${carModel(v)} ${v.plate}`;
    const window = offerWindow(ctx, cat);
    const offers = cat.insurers.map((company) => ({
      product: 'rca',
      name: `RCA 12 luni, ${insurerName(ctx, company.company)}, ${vehicle}`,
      company: company.company,
      duration: 365,
      price: baniToMdl(finalPrice(ctx, premium(company))),
      currency: 'MDL',
      ...window,
    }));
    return { offers };
  },

  async price(ctx, cat, item) {
    const [v, company] = await checkAll(
      () => insuredVehicle(ctx, item.vehicle, item.idnx),
      () => {
        const found = cat.insurers.find((c) => c.company === item.insurance_company);
        if (!found) throw productRule(`Unknown insurance_company ${item.insurance_company}`);
        return found;
      },
      () => requireWindowStart(ctx, cat, item.start_date),
    );
    const base = premiums(cat, v, item.idnx)(company);
    const endDate = endDateForDays(item.start_date, 365);
    return {
      price: finalPrice(ctx, base),
      description: `Asigurare RCA, ${carModel(v)} ${v.plate}`,
      startDate: item.start_date,
      endDate,
      details: { request: item, vehicle: v, base_premium: base },
    };
  },

  cover: ({ details: d }) => ({ vehicle: d.vehicle.certificate, company: d.request.insurance_company }),

  issue(ctx, _cat, row, receipt) {
    const { request, vehicle: v, base_premium } = row.details;
    const fields = {
      ...vehicleFields(v),
      ...issuedPrice(convertedReference(ctx, { reference: base_premium, currency: 'MDL' }), row.price),
    };
    return issued(fields, 'Poliță de asigurare obligatorie RCA', [
      ...policyLines(receipt, insurerName(ctx, request.insurance_company)),
      ...vehicleLines(v),
      { label: 'Asigurat (IDNP/IDNO)', value: request.idnx },
      { label: 'Perioada', value: periodText(row) },
      ...priceLines('Primă de referință', fields, row.price),
    ]);
  },
});
