/**
 * An error answer of the Polita API: `status` is the HTTP status, `error` and `message` the fields
 * of the JSON error body (`{statusCode, error, message}`). Each meaning has a subclass; an answer
 * that fits none of them is a plain PolitaError.
 */
export class PolitaError extends Error {
  readonly status: number;
  readonly error: string;
  /** The service's request id (`x-request-id`), to quote to the operator. */
  readonly requestId?: string;

  constructor(status: number, error: string, message: string, requestId?: string) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.error = error;
    this.requestId = requestId;
  }
}

/** 401 (no signature) or 403 `Forbidden` (wrong partner id, secret or signature; a disabled partner). */
export class PolitaAuthenticationError extends PolitaError {}

/** 403 with a reason: the partner has no wallet, or balance spending is disabled. */
export class PolitaWalletUnavailableError extends PolitaError {}

/** 404: an unknown order (or another partner's), or a vehicle the registry does not know (get-offers). */
export class PolitaNotFoundError extends PolitaError {}

/**
 * 400 (and 413): the request failed its schema (`message` names the field), or a rule answered with
 * 400: every get-offers product rule, the wallet's `Insufficient balance`, `Order is not payable …`.
 */
export class PolitaValidationError extends PolitaError {}

/** A product rule refused on create-order or confirm-order: HTTP 500 with `message: "[API] <reason>"`. */
export class PolitaProductRuleError extends PolitaError {
  /** The reason without the `[API] ` prefix. */
  get reason(): string {
    return this.message.replace(/^\s*\[API\]\s*/, '');
  }
}

/** 409: an Idempotency-Key reused with another body, or its first request still running. */
export class PolitaConflictError extends PolitaError {}

/** 429: too many requests. `retryAfter` is the `Retry-After` header in seconds, when given. */
export class PolitaRateLimitError extends PolitaError {
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    error: string,
    message: string,
    requestId: string | undefined,
    retryAfter: number | undefined,
  ) {
    super(status, error, message, requestId);
    this.retryAfter = retryAfter;
  }
}

/** 5xx that is not a product rule: an unexpected failure of the service (or of a proxy before it). */
export class PolitaServerError extends PolitaError {}

/**
 * No answer: the connection failed or broke, or the answer was not JSON where JSON was due. Not a
 * PolitaError (there is no status); `cause` holds the underlying error.
 */
export class PolitaConnectionError extends Error {
  override name = 'PolitaConnectionError';
}

/** No answer within `timeoutMs`. */
export class PolitaTimeoutError extends PolitaConnectionError {
  override name = 'PolitaTimeoutError';
}

/** waitForOrder gave up: the order did not reach a terminal status in time. */
export class WaitForOrderTimeoutError extends Error {
  override name = 'WaitForOrderTimeoutError';
  readonly orderId: string;
  readonly timeoutMs: number;
  /** The status last read, undefined when no read succeeded. */
  readonly lastStatus: string | undefined;

  constructor(orderId: string, timeoutMs: number, lastStatus: string | undefined) {
    super(
      `Order ${orderId} did not reach a terminal status (completed, failed, refunded, expired) within ` +
        `${timeoutMs} ms; last status: ${lastStatus ?? 'none read'}`,
    );
    this.orderId = orderId;
    this.timeoutMs = timeoutMs;
    this.lastStatus = lastStatus;
  }
}

/** A webhook that must not be trusted: missing or malformed headers, stale, unsigned or tampered. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** The error of an HTTP answer that is not 2xx. */
export function errorFromAnswer(
  status: number,
  statusText: string,
  headers: Headers,
  text: string,
): PolitaError {
  let error = statusText || `HTTP ${status}`;
  let message = text.trim().slice(0, 500) || error;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') error = body.error;
    if (typeof body.message === 'string') message = body.message;
    else if (typeof body.error === 'string') message = body.error;
  } catch {
    /* not JSON (a proxy's page): the status text and the text */
  }
  const requestId = headers.get('x-request-id') ?? undefined;
  if (status === 401 || (status === 403 && error === 'Forbidden')) {
    return new PolitaAuthenticationError(status, error, message, requestId);
  }
  if (status === 403) return new PolitaWalletUnavailableError(status, error, message, requestId);
  if (status === 404) return new PolitaNotFoundError(status, error, message, requestId);
  if (status === 400 || status === 413 || status === 422) {
    return new PolitaValidationError(status, error, message, requestId);
  }
  if (status === 409) return new PolitaConflictError(status, error, message, requestId);
  if (status === 429) {
    return new PolitaRateLimitError(status, error, message, requestId, retryAfterSeconds(headers));
  }
  if (status >= 500) {
    return message.includes('[API]')
      ? new PolitaProductRuleError(status, error, message, requestId)
      : new PolitaServerError(status, error, message, requestId);
  }
  return new PolitaError(status, error, message, requestId);
}

/** `Retry-After` as seconds: a number of seconds or an HTTP date. */
function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
