import { Type } from '@sinclair/typebox';
import { checkAll, productRule, vehicleNotFound } from '../domain/errors.ts';
import { idnxProblem } from '../domain/idnx.ts';
import { addDays, isValidDate } from '../domain/time.ts';
import type { IssueReceipt, RegisteredVehicle } from '../providers/types.ts';
import type { Correction, Cover, ProductContext, StoredItem } from './types.ts';

/** Request-schema pieces shared by products ("schema" = types, formats, enumerations, always-required). */
export const S = {
  vehicle: () =>
    Type.String({ pattern: '^[0-9]{9}$', description: 'MD vehicle certificate number, 9 digits' }),
  idnx: () =>
    Type.String({ pattern: '^[0-9]{13}$', description: 'IDNP or IDNO, 13 digits with a valid check digit' }),
  idnp: () =>
    Type.String({ pattern: '^[0-9]{13}$', description: 'IDNP, 13 digits with a valid check digit' }),
  date: (description = 'yyyy-mm-dd') => Type.String({ format: 'date', description }),
  text: (max = 200) => Type.String({ minLength: 1, maxLength: max }),
};

/** The registered vehicle; rejects with vehicle_not_found when the registry has none. */
export async function requireVehicle(ctx: ProductContext, certificate: string): Promise<RegisteredVehicle> {
  const v = await ctx.providers.vehicles.find(certificate);
  if (!v) throw vehicleNotFound();
  return v;
}

/**
 * A vehicle and the 13-digit code of the person insured with it (IDNP or IDNO), both checked:
 * the vehicle in the registry, the code by its check digit.
 */
export async function insuredVehicle(
  ctx: ProductContext,
  certificate: string,
  idnx: string,
): Promise<RegisteredVehicle> {
  const [v] = await checkAll(
    () => requireVehicle(ctx, certificate),
    () => requireIdnx('idnx', idnx),
  );
  return v;
}

export const carModel = (v: RegisteredVehicle): string => `${v.make} ${v.model}`;

export function requireIdnx(field: string, value: string, kind: 'idnx' | 'idnp' = 'idnx'): void {
  const problem = idnxProblem(field, value, kind);
  if (problem) throw productRule(problem);
}

/**
 * start_date within [min_start_date, min_start_date + max_interval], with a reason naming the range.
 */
export function requireStartDate(
  start: string,
  minStart: string,
  maxInterval: number,
  field = 'start_date',
): void {
  const last = addDays(minStart, maxInterval);
  if (!isValidDate(start) || start < minStart || start > last) {
    throw productRule(`${field} must be between ${minStart} and ${last}`);
  }
}

/** A vignette's create-order request, as far as a correction reaches into it. */
interface VignetteRequest {
  start_date: string;
  foreign_vehicle?: { plate_number: string };
}

/**
 * A vignette's correction (decision 0088): the request with the new start date and plate. Only a
 * plate the partner typed (a foreign vehicle's) is corrected; an MD vehicle's comes from the registry.
 */
export function correctVignette<R extends VignetteRequest>(
  request: R,
  changes: Correction,
): { request: R } | { refused: string } {
  if (changes.plate_number !== undefined && !request.foreign_vehicle) {
    return {
      refused: 'The plate comes from the vehicle registry: only a plate the partner typed can be corrected',
    };
  }
  return {
    request: {
      ...request,
      ...(changes.start_date !== undefined ? { start_date: changes.start_date } : {}),
      ...(changes.plate_number !== undefined && request.foreign_vehicle
        ? { foreign_vehicle: { ...request.foreign_vehicle, plate_number: changes.plate_number } }
        : {}),
    },
  };
}

/** The catalogue fields of a product sold for a start date in a window: from today + offset, for max_interval days. */
export const StartWindow = {
  max_interval: Type.Integer({ minimum: 0 }),
  min_start_offset_days: Type.Integer({ minimum: 0 }),
};
interface Window {
  max_interval: number;
  min_start_offset_days: number;
}

/** The first start date the product may be bought for. */
export const minStartDate = (ctx: ProductContext, cat: Window): string =>
  addDays(ctx.today, cat.min_start_offset_days);

/** An offer's start-date window, as the wire shows it. */
export const offerWindow = (ctx: ProductContext, cat: Window) => ({
  min_start_date: minStartDate(ctx, cat),
  max_interval: cat.max_interval,
});

/** A start date in the product's window (`requireStartDate` from its first start date). */
export const requireWindowStart = (ctx: ProductContext, cat: Window, start: string): void =>
  requireStartDate(start, minStartDate(ctx, cat), cat.max_interval);

export function insurerName(ctx: ProductContext, code: string): string {
  return ctx.common.insurers.find((i) => i.code === code)?.name ?? code;
}

/**
 * Buys one order item from its provider. The order, the item and its dates come from the stored
 * row; the product's `cover` names who or what is covered (vehicle, plate, VIN, insurer).
 */
export function purchase(
  ctx: ProductContext,
  row: StoredItem,
  orderId: string,
  subject: Cover,
): Promise<IssueReceipt> {
  return ctx.providers.issuer.issue({
    product: row.product,
    orderId,
    idx: row.idx,
    ...(row.start_date ? { startDate: row.start_date } : {}),
    ...(row.end_date ? { endDate: row.end_date } : {}),
    ...subject,
  });
}
