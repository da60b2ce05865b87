/**
 * Errors the business rules raise. Each has a stable code; the HTTP layer maps codes to status
 * codes in exactly one place (http/errors.ts), so no rule ever knows about HTTP.
 */
export type ErrorCode =
  /** The request is malformed or breaks a rule answered with 400 everywhere. */
  | 'bad_request'
  /** A product rule: 400 on get-offers, 500 `[API] …` on create-order and confirm-order. */
  | 'product_rule'
  /** An MD certificate the registry does not know: 404 on get-offers, a product rule elsewhere. */
  | 'vehicle_not_found'
  | 'not_found'
  | 'forbidden'
  | 'conflict'
  /** A provider refused what was asked of it (a cancellation): 502, nothing changed. */
  | 'provider_refused';

export class DomainError extends Error {
  readonly code: ErrorCode;
  /** What the API answers: the first refusal. */
  readonly reason: string;
  /** Every refusal of the request, `reason` first, when checks were gathered (`checkAll`). */
  readonly reasons: readonly string[];
  constructor(code: ErrorCode, reason: string, reasons: readonly string[] = [reason]) {
    super(reason);
    this.name = 'DomainError';
    this.code = code;
    this.reason = reason;
    this.reasons = reasons;
  }
}

/** The refusals of product rules that `checkAll` gathers. */
const GATHERED: ReadonlySet<ErrorCode> = new Set(['product_rule', 'vehicle_not_found']);

/**
 * Checks of one request that do not depend on one another, each run even when one before it
 * refused, so the sales desk can show every refusal of a form at once (decision 0098); the values the
 * checks return, in order. The error thrown is the first refusal's, as when each check threw in
 * turn, so the API answers exactly what it answered before; its `reasons` hold the others. An
 * error that is no product rule's refusal (a provider down) is thrown as it is when nothing was
 * refused before it, and otherwise the refusals before it are.
 */
export async function checkAll<T extends readonly unknown[]>(
  ...checks: { [K in keyof T]: () => T[K] | Promise<T[K]> }
): Promise<T>;
export async function checkAll(...checks: readonly (() => unknown)[]): Promise<readonly unknown[]> {
  const values: unknown[] = [];
  const refused: DomainError[] = [];
  for (const check of checks) {
    try {
      // A check answered at once is not awaited: each await is a turn of the microtask queue.
      const value = check();
      values.push(value instanceof Promise ? await value : value);
    } catch (err) {
      if (!(err instanceof DomainError && GATHERED.has(err.code))) {
        if (refused.length) break;
        throw err;
      }
      refused.push(err);
      values.push(undefined);
    }
  }
  const first = refused[0];
  if (first)
    throw new DomainError(
      first.code,
      first.reason,
      refused.flatMap((e) => e.reasons),
    );
  return values;
}

/** `err` under another code (a product rule answered 400 on get-offers), its refusals kept. */
export const recoded = (err: DomainError, code: ErrorCode, reason = err.reason): DomainError =>
  new DomainError(code, reason, [reason, ...err.reasons.slice(1)]);

export const badRequest = (reason: string) => new DomainError('bad_request', reason);
export const productRule = (reason: string) => new DomainError('product_rule', reason);
export const notFound = (reason: string) => new DomainError('not_found', reason);
export const forbidden = (reason: string) => new DomainError('forbidden', reason);
export const conflict = (reason: string) => new DomainError('conflict', reason);
export const providerRefused = (reason: string) => new DomainError('provider_refused', reason);
export const vehicleNotFound = () => new DomainError('vehicle_not_found', 'Vehicle not found');

export const orderNotFound = () => notFound('Order not found');
export const notPayable = (status: string) => badRequest(`Order is not payable (status ${status})`);
