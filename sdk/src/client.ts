import { createHmac, randomUUID } from 'node:crypto';
import {
  errorFromAnswer,
  PolitaConflictError,
  PolitaConnectionError,
  PolitaRateLimitError,
  PolitaServerError,
  PolitaTimeoutError,
  WaitForOrderTimeoutError,
} from './errors.js';
import type {
  Balance,
  CancelOrderPreview,
  CancelOrderRequest,
  ConfirmOrderRequest,
  CorrectOrderPreview,
  CorrectOrderRequest,
  CreateOrderRequest,
  EventsPage,
  GetOrderRequest,
  ListEventsRequest,
  Order,
  PayOrderFromBalanceRequest,
  Product,
  QuoteRequests,
  QuoteResponses,
  ResendEventAnswer,
  ResendEventRequest,
} from './types.js';

export interface PolitaOptions {
  /** The service's address, for example `https://api.polita.md` (without `/v1`). */
  baseUrl: string;
  partnerId: string;
  /** The partner secret: it signs every request and never leaves this process. */
  secret: string;
  /** Per attempt, until the whole answer has arrived. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt (network errors, 429, 5xx without `[API]`). Default 2. */
  maxRetries?: number;
  /** First backoff delay; each retry doubles it, with jitter. Default 500. */
  retryDelayMs?: number;
  /**
   * How requests are signed. `timestamped` (the default): `X-Polita-Signature: id=…,t=…,v1=…` over
   * `"<t>.POST /v1/<endpoint>.<body>"`, which a captured request cannot be replayed with later or
   * against another endpoint. `spec`: the specification's `X-Hmac-Signature` over the body alone.
   */
  signature?: 'timestamped' | 'spec';
}

/** The options of create-order, confirm-order, pay-order-from-balance and resend-event. */
export interface WriteOptions {
  /**
   * Sent as `Idempotency-Key` (1 to 255 visible ASCII characters). One is generated when absent;
   * every retry of the call sends the same key. Pass your own to make a retry after a crash safe.
   */
  idempotencyKey?: string;
}

export interface WaitForOrderOptions {
  /** Give up after this long (WaitForOrderTimeoutError). */
  timeoutMs: number;
  /** Between two reads. Default 1000. */
  intervalMs?: number;
}

/** Statuses an order never leaves by itself (a `failed` one may still be refunded by the operator). */
export const TERMINAL_STATUSES: readonly string[] = ['completed', 'failed', 'refunded', 'expired'];

const MAX_DELAY_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The Polita partner API. Every method POSTs a signed JSON body to `/v1/<endpoint>` and answers the
 * response body, or throws a PolitaError subclass (or PolitaConnectionError when no answer came).
 */
export class Polita {
  readonly #base: string;
  readonly #partnerId: string;
  readonly #secret: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #retryDelayMs: number;
  readonly #signature: 'timestamped' | 'spec';

  constructor(options: PolitaOptions) {
    if (!options?.baseUrl || !options.partnerId || !options.secret) {
      throw new TypeError('Polita needs baseUrl, partnerId and secret');
    }
    this.#base = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.#partnerId = options.partnerId;
    this.#secret = options.secret;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.#retryDelayMs = options.retryDelayMs ?? 500;
    this.#signature = options.signature ?? 'timestamped';
    if (this.#signature !== 'timestamped' && this.#signature !== 'spec') {
      throw new TypeError('signature must be "timestamped" or "spec"');
    }
  }

  /** Prices of one product. The request's `product` picks the request and response types. */
  getOffers<P extends Product>(request: QuoteRequests[P] & { product: P }): Promise<QuoteResponses[P]> {
    return this.#call('get-offers', request);
  }

  /** A draft order of 1 to 10 products, priced from the current tariff. */
  createOrder(request: CreateOrderRequest, options: WriteOptions = {}): Promise<Order> {
    return this.#call('create-order', request, options.idempotencyKey ?? randomUUID());
  }

  /** Records the customer's payment of a draft order (`paid`); issuance follows. */
  confirmOrder(request: ConfirmOrderRequest, options: WriteOptions = {}): Promise<Order> {
    return this.#call('confirm-order', request, options.idempotencyKey ?? randomUUID());
  }

  /** Pays a draft order from the partner's prepaid wallet (`paid`); issuance follows. */
  payOrderFromBalance(request: PayOrderFromBalanceRequest, options: WriteOptions = {}): Promise<Order> {
    return this.#call('pay-order-from-balance', request, options.idempotencyKey ?? randomUUID());
  }

  /**
   * Cancels a completed order in two steps: without `quote_id` it previews (the refund and a
   * `quote_id`, or `cancellable: false` and the reason; nothing changes); with the preview's
   * `quote_id` it confirms and answers the refunded order. Confirming twice answers the same order.
   */
  cancelOrder(request: { id: string }, options?: WriteOptions): Promise<CancelOrderPreview>;
  cancelOrder(request: { id: string; quote_id: string }, options?: WriteOptions): Promise<Order>;
  cancelOrder(request: CancelOrderRequest, options: WriteOptions = {}): Promise<CancelOrderPreview | Order> {
    return this.#call('cancel-order', request, options.idempotencyKey ?? randomUUID());
  }

  /**
   * Corrects a completed vignette's plate or start date, as cancelOrder: without `quote_id` a
   * preview (`correctable` and a `quote_id`, or the reason), with it (and the same `changes`) the
   * re-issued order.
   */
  correctOrder(
    request: Omit<CorrectOrderRequest, 'quote_id'>,
    options?: WriteOptions,
  ): Promise<CorrectOrderPreview>;
  correctOrder(request: CorrectOrderRequest & { quote_id: string }, options?: WriteOptions): Promise<Order>;
  correctOrder(
    request: CorrectOrderRequest,
    options: WriteOptions = {},
  ): Promise<CorrectOrderPreview | Order> {
    return this.#call('correct-order', request, options.idempotencyKey ?? randomUUID());
  }

  getOrder(request: GetOrderRequest): Promise<Order> {
    return this.#call('get-order', request);
  }

  getBalance(): Promise<Balance> {
    return this.#call('get-balance', {});
  }

  /**
   * The partner's events of the last 30 days, oldest first, a page (one list-events call) at a time:
   * `for await (const page of polita.listEvents({ after: lastHandled })) { ... }`. Each page after the
   * first starts after the last event of the one before; the iteration ends with the page whose
   * `has_more` is false. Keep the last `id` you handled: it is where a later catch-up starts.
   */
  async *listEvents(request: ListEventsRequest = {}): AsyncGenerator<EventsPage, void, undefined> {
    let after = request.after;
    for (;;) {
      const page = await this.#call<EventsPage>('list-events', {
        ...request,
        ...(after !== undefined ? { after } : {}),
      });
      yield page;
      const last = page.events.at(-1);
      if (!page.has_more || !last) return;
      after = last.id;
    }
  }

  /**
   * Sends one of the partner's events again (same event id and body) to its current webhook URL;
   * answers once the attempt is queued. At most 60 a minute.
   */
  resendEvent(request: ResendEventRequest, options: WriteOptions = {}): Promise<ResendEventAnswer> {
    return this.#call('resend-event', request, options.idempotencyKey ?? randomUUID());
  }

  /**
   * Reads the order every `intervalMs` until its status is terminal (completed, failed, refunded,
   * expired) and answers it; after `timeoutMs` throws WaitForOrderTimeoutError. An error of
   * get-order (after its retries) ends the wait with that error.
   */
  async waitForOrder(id: string, options: WaitForOrderOptions): Promise<Order> {
    const { timeoutMs, intervalMs = 1000 } = options;
    const deadline = Date.now() + timeoutMs;
    let last: string | undefined;
    for (;;) {
      const order = await this.getOrder({ id });
      last = order.status;
      if (TERMINAL_STATUSES.includes(order.status)) return order;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitForOrderTimeoutError(id, timeoutMs, last);
      await sleep(Math.min(intervalMs, left));
    }
  }

  /**
   * One call: the body serialised once, those bytes signed and sent on every attempt (with the same
   * Idempotency-Key for a write), retried on what a retry can cure.
   */
  async #call<T>(endpoint: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.#signature === 'spec') {
      const signature = createHmac('sha512', this.#secret).update(bytes).digest('hex');
      headers['x-hmac-signature'] = `${this.#partnerId}:${signature}`;
    }
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    const url = `${this.#base}/v1/${endpoint}`;

    for (let attempt = 0; ; attempt++) {
      let failure: Error;
      // Signed for each attempt: a retry after a long backoff carries a fresh timestamp.
      if (this.#signature === 'timestamped') {
        const t = Math.floor(Date.now() / 1000);
        const v1 = createHmac('sha512', this.#secret)
          .update(`${t}.POST /v1/${endpoint}.`)
          .update(bytes)
          .digest('hex');
        headers['x-polita-signature'] = `id=${this.#partnerId},t=${t},v1=${v1}`;
      }
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body: bytes,
          signal: AbortSignal.timeout(this.#timeoutMs),
          redirect: 'error',
        });
        const text = await res.text();
        if (res.ok) {
          try {
            return JSON.parse(text) as T;
          } catch (cause) {
            throw new PolitaConnectionError(
              `${endpoint} answered ${res.status} with a body that is not JSON`,
              {
                cause,
              },
            );
          }
        }
        failure = errorFromAnswer(res.status, res.statusText, res.headers, text);
      } catch (err) {
        failure = this.#connectionError(endpoint, err);
      }
      const wait = attempt < this.#maxRetries ? this.#retryDelay(failure, attempt) : undefined;
      if (wait === undefined) throw failure;
      await sleep(wait);
    }
  }

  #connectionError(endpoint: string, err: unknown): PolitaConnectionError {
    if (err instanceof PolitaConnectionError) return err;
    const name = (err as { name?: string })?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new PolitaTimeoutError(`${endpoint}: no answer within ${this.#timeoutMs} ms`, { cause: err });
    }
    const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
    const why = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
    return new PolitaConnectionError(`${endpoint}: cannot reach ${this.#base} (${why})`, { cause: err });
  }

  /** Milliseconds to wait before the next attempt, or undefined when this failure is final. */
  #retryDelay(failure: Error, attempt: number): number | undefined {
    if (failure instanceof PolitaRateLimitError) {
      if (failure.retryAfter === undefined) return this.#backoff(attempt);
      // Beyond the backoff ceiling a retry would only hold the caller: hand the 429 back instead.
      return failure.retryAfter * 1000 > MAX_DELAY_MS
        ? undefined
        : failure.retryAfter * 1000 + Math.random() * 100;
    }
    const retryable =
      failure instanceof PolitaConnectionError ||
      failure instanceof PolitaServerError ||
      // Our own earlier attempt (timed out here) is still running there: its answer will be replayed.
      (failure instanceof PolitaConflictError && /still being processed/i.test(failure.message));
    return retryable ? this.#backoff(attempt) : undefined;
  }

  /** Exponential backoff with jitter: half the doubled delay fixed, half random. */
  #backoff(attempt: number): number {
    const full = Math.min(MAX_DELAY_MS, this.#retryDelayMs * 2 ** attempt);
    return full / 2 + (Math.random() * full) / 2;
  }
}
