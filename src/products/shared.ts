import { Type } from '@sinclair/typebox';
import { productRule, vehicleNotFound } from '../domain/errors.ts';
import { idnxProblem } from '../domain/idnx.ts';
import { addDays, isValidDate } from '../domain/time.ts';
import type { IssueReceipt, IssueRequest, RegisteredVehicle } from '../providers/types.ts';
import type { ProductContext, StoredItem } from './types.ts';

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

export async function requireVehicle(ctx: ProductContext, certificate: string): Promise<RegisteredVehicle> {
  const v = await ctx.providers.vehicles.find(certificate);
  if (!v) throw vehicleNotFound();
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

export function insurerName(ctx: ProductContext, code: string): string {
  return ctx.common.insurers.find((i) => i.code === code)?.name ?? code;
}

/**
 * Buys one order item from its provider. The order, the item and its dates come from the stored
 * row; the product names who or what is covered (vehicle, plate, VIN, insurer).
 */
export function purchase(
  ctx: ProductContext,
  row: StoredItem,
  orderId: string,
  subject: Omit<IssueRequest, 'product' | 'orderId' | 'idx'>,
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
