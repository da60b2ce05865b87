import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { baniToMdl, formatAmount } from '../domain/money.ts';
import { formatDmy } from '../domain/time.ts';
import type { PolicyField } from '../documents/policy-pdf.ts';
import type { IssueReceipt, RegisteredVehicle } from '../providers/types.ts';
import { carModel } from './shared.ts';
import type { IssuedItem, StoredItem } from './types.ts';

/**
 * The fields products share in their offers, their issued products and their policy documents,
 * each written once so that every product puts them on the wire in the same words and order.
 */

/** What a product was priced at, as the wire shows it: the tariff in its currency and the rate to MDL. */
export interface Reference {
  reference_price: string;
  reference_exchange_rate: string;
}

/** What a vehicle product keeps of an order's item: the request as validated and the registered vehicle. */
export interface VehicleItem<S extends TSchema> {
  request: Static<S>;
  vehicle: RegisteredVehicle;
}

/** Wire fields of an issued MD-registered vehicle, for a module's `issued` schema. */
export const vehicleProperties = { plate_number: Type.String(), car_model: Type.String() };
/** Wire fields of an issued product's price, for a module's `issued` schema. */
export const priceProperties = {
  reference_price: Type.String(),
  reference_exchange_rate: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
};

/** An issued product's vehicle fields (`vehicleProperties`). */
export const vehicleFields = (v: RegisteredVehicle) => ({ plate_number: v.plate, car_model: carModel(v) });

/** An issued product's price fields (`priceProperties`): its reference, then the price paid in MDL. */
export const issuedPrice = (ref: Reference, priceBani: number) => ({
  reference_price: ref.reference_price,
  reference_exchange_rate: ref.reference_exchange_rate,
  price: baniToMdl(priceBani),
  currency: 'MDL',
});

/** An offer's price fields: the price in MDL, then the reference it was computed from. */
export const offerPrice = (ref: Reference, priceBani: number) => ({
  price: baniToMdl(priceBani),
  currency: 'MDL',
  reference_price: ref.reference_price,
  reference_exchange_rate: ref.reference_exchange_rate,
});

/** A policy's `start – end` line value, from the stored item's dates. */
export const periodText = (row: StoredItem): string =>
  `${formatDmy(row.start_date!)} – ${formatDmy(row.end_date!)}`;

/**
 * The closing lines of a policy document: the reference it was priced at (`label`: "Primă",
 * "Tarif"…), any lines the product puts before the price (a commission), and the price paid.
 */
export const priceLines = (
  label: string,
  ref: Reference,
  priceBani: number,
  before: PolicyField[] = [],
): PolicyField[] => [
  { label, value: ref.reference_price },
  { label: 'Curs de referință', value: ref.reference_exchange_rate },
  ...before,
  { label: 'Preț', value: formatAmount(priceBani, 'MDL') },
];

/** What `issue` returns: the issued product's wire fields, and its policy document's title and lines. */
export const issued = (fields: Record<string, unknown>, title: string, lines: PolicyField[]): IssuedItem => ({
  fields,
  document: { title, fields: lines },
});

/** The opening lines of an insurance policy: its number, then its insurer's name. */
export const policyLines = (receipt: IssueReceipt, insurer: string): PolicyField[] => [
  { label: 'Număr poliță', value: receipt.series },
  { label: 'Asigurător', value: insurer },
];

/** The lines of an insured MD-registered vehicle; `model` is the vehicle line (make and model by default). */
export const vehicleLines = (v: RegisteredVehicle, model = carModel(v)): PolicyField[] => [
  { label: 'Număr de înmatriculare', value: v.plate },
  { label: 'Vehicul', value: model },
  { label: 'Număr certificat', value: v.certificate },
  { label: 'VIN', value: v.vin ?? '—' },
];
