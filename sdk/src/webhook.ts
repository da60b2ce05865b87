import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { OrderStatus } from './types.js';

/** An event's status: a transition into one of these, or the operator's `test` event. */
export type WebhookStatus = Extract<OrderStatus, 'completed' | 'failed' | 'refunded' | 'expired'> | 'test';

export interface WebhookEvent {
  orderId: string;
  /** Typed with the statuses known today; a newer service may send another string. */
  status: WebhookStatus | (string & {});
  /** `X-Polita-Event-Id`: the same on every attempt of one event, so a receiver can drop repeats. */
  eventId: string;
  /** `X-Polita-Timestamp`: Unix seconds of this attempt. */
  timestamp: number;
}

export interface VerifyWebhookOptions {
  /** The raw request body exactly as received: a string or the bytes (never a re-serialised object). */
  body: string | Uint8Array;
  /** The request headers: a Headers instance, or a plain object with names in any case (node:http's req.headers). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The partner secret; during a rotation, both secrets. */
  secret: string | readonly string[];
  /** How far the timestamp may be from now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time (a Date or epoch milliseconds); default now. */
  now?: Date | number;
}

/**
 * Verifies a Polita webhook: `X-Polita-Signature: t=<timestamp>,v1=<hex HMAC-SHA512(secret,
 * "<timestamp>.<raw body>")>` (one `v1` per valid secret during a rotation), a timestamp within the
 * tolerance, and a body `{orderId, status}`. Answers the event or throws WebhookVerificationError.
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const { body, headers, secret, toleranceSeconds = 300, now = Date.now() } = options;
  const eventId = header(headers, 'x-polita-event-id');
  const timestampText = header(headers, 'x-polita-timestamp');
  const signature = header(headers, 'x-polita-signature');
  if (!eventId || !timestampText || !signature) {
    throw new WebhookVerificationError(
      'Missing X-Polita-Event-Id, X-Polita-Timestamp or X-Polita-Signature header',
    );
  }
  const parts = signature.split(',').map((p) => p.trim().split('='));
  const t = parts.filter(([k]) => k === 't').map(([, v]) => v);
  const v1 = parts.filter(([k, v]) => k === 'v1' && v && /^[0-9a-f]{128}$/i.test(v)).map(([, v]) => v!);
  if (t.length !== 1 || !/^\d{1,12}$/.test(t[0] ?? '') || v1.length === 0) {
    throw new WebhookVerificationError('Malformed X-Polita-Signature header');
  }
  if (t[0] !== timestampText.trim()) {
    throw new WebhookVerificationError('X-Polita-Timestamp does not match the signature timestamp');
  }
  const timestamp = Number(t[0]);
  const nowSeconds = (now instanceof Date ? now.getTime() : now) / 1000;
  if (!(Math.abs(nowSeconds - timestamp) <= toleranceSeconds)) {
    throw new WebhookVerificationError(`Webhook timestamp is more than ${toleranceSeconds} s from now`);
  }

  const raw =
    typeof body === 'string'
      ? Buffer.from(body, 'utf8')
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('verifyWebhook needs a secret (a string or an array of strings)');
  }
  let matched = false;
  // Every secret against every v1, match or not: the time taken says nothing about which matched.
  for (const s of secrets) {
    const expected = createHmac('sha512', s).update(`${timestamp}.`).update(raw).digest();
    for (const candidate of v1) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('No X-Polita-Signature v1 matches the secret');

  let event: { orderId?: unknown; status?: unknown };
  try {
    event = JSON.parse(raw.toString('utf8')) as typeof event;
  } catch {
    throw new WebhookVerificationError('Webhook body is not JSON');
  }
  if (
    typeof event?.orderId !== 'string' ||
    typeof event.status !== 'string' ||
    !event.orderId ||
    !event.status
  ) {
    throw new WebhookVerificationError('Webhook body has no orderId and status');
  }
  return { orderId: event.orderId, status: event.status, eventId, timestamp };
}

/** One header, by name in any case; a repeated header is refused as ambiguous. */
function header(headers: VerifyWebhookOptions['headers'], name: string): string | undefined {
  if (typeof (headers as Headers)?.get === 'function') return (headers as Headers).get(name) ?? undefined;
  const values = Object.entries(headers ?? {})
    .filter(([k]) => k.toLowerCase() === name)
    .flatMap(([, v]) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
  if (values.length > 1) throw new WebhookVerificationError(`Repeated ${name} header`);
  return values[0];
}
