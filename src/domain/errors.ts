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
  readonly reason: string;
  constructor(code: ErrorCode, reason: string) {
    super(reason);
    this.name = 'DomainError';
    this.code = code;
    this.reason = reason;
  }
}

export const badRequest = (reason: string) => new DomainError('bad_request', reason);
export const productRule = (reason: string) => new DomainError('product_rule', reason);
export const notFound = (reason: string) => new DomainError('not_found', reason);
export const forbidden = (reason: string) => new DomainError('forbidden', reason);
export const conflict = (reason: string) => new DomainError('conflict', reason);
export const providerRefused = (reason: string) => new DomainError('provider_refused', reason);
export const vehicleNotFound = () => new DomainError('vehicle_not_found', 'Vehicle not found');

export const orderNotFound = () => notFound('Order not found');
export const notPayable = (status: string) => badRequest(`Order is not payable (status ${status})`);
