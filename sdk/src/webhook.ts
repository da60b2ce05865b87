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
  /**
   * Accept a delivery signed with `v1` alone (timestamp and body, not the event id), as services
   * from before `v2` send. Default false: a matching `v2` is required.
   */
  allowV1?: boolean;
}

/**
 * Verifies a Polita webhook: `X-Polita-Signature: t=<timestamp>,v1=…,v2=<hex HMAC-SHA512(secret,
 * "<timestamp>.<event id>.<raw body>")>` (one of each per valid secret during a rotation), a
 * timestamp within the tolerance, and a body `{orderId, status}`. `v2` covers the
 * `X-Polita-Event-Id` a receiver de-duplicates on, so a capture cannot come back under a new id;
 * it is required unless `allowV1` is set. Answers the event or throws WebhookVerificationError.
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const { body, headers, secret, toleranceSeconds = 300, now = Date.now(), allowV1 = false } = options;
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
  const hexOf = (scheme: string) =>
    parts.filter(([k, v]) => k === scheme && v && /^[0-9a-f]{128}$/i.test(v)).map(([, v]) => v!);
  const v1 = hexOf('v1');
  const v2 = hexOf('v2');
  if (t.length !== 1 || !/^\d{1,12}$/.test(t[0] ?? '') || v1.length + v2.length === 0) {
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
  if (!allowV1 && v2.length === 0) {
    throw new WebhookVerificationError(
      'X-Polita-Signature has no v2 (the signature over the event id); pass allowV1: true to accept v1 alone',
    );
  }
  const matches = (candidates: string[], signed: string) => {
    let matched = false;
    // Every secret against every candidate, match or not: the time says nothing about which matched.
    for (const s of secrets) {
      const expected = createHmac('sha512', s).update(signed).update(raw).digest();
      for (const candidate of candidates) {
        if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
      }
    }
    return matched;
  };
  const matchedV2 = matches(v2, `${timestamp}.${eventId}.`);
  const matchedV1 = allowV1 && !matchedV2 && matches(v1, `${timestamp}.`);
  if (!matchedV2 && !matchedV1) {
    throw new WebhookVerificationError(
      allowV1
        ? 'No X-Polita-Signature v2 or v1 matches the secret'
        : 'No X-Polita-Signature v2 matches the secret and X-Polita-Event-Id',
    );
  }

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
