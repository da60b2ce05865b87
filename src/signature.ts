import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The partner API signature: lowercase hex HMAC-SHA512 of the exact body bytes, keyed with the
 * partner secret, sent as `X-Hmac-Signature: <partner id>:<signature>`. Used to verify requests,
 * to sign webhooks, and by integrators (npm run call) to sign their own requests.
 */
export const SIGNATURE_HEADER = 'x-hmac-signature';

export function sign(secret: string, body: string | Uint8Array): string {
  return createHmac('sha512', secret).update(body).digest('hex');
}

export function signatureHeader(partnerId: string, secret: string, body: string | Uint8Array): string {
  return `${partnerId}:${sign(secret, body)}`;
}

const HEX_SIGNATURE = /^[0-9a-f]{128}$/;

/** Splits `<partner id>:<128 lowercase hex digits>`; null when the header is not of that form. */
export function parseSignatureHeader(value: string): { partnerId: string; signature: Buffer } | null {
  const colon = value.lastIndexOf(':');
  if (colon <= 0) return null;
  const hex = value.slice(colon + 1);
  if (!HEX_SIGNATURE.test(hex)) return null;
  return { partnerId: value.slice(0, colon), signature: Buffer.from(hex, 'hex') };
}

/**
 * Constant-time check against every currently valid secret (two during a rotation). `prefix`, when
 * given, is signed before the body (the timestamped form's `"<t>.POST /v1/<endpoint>."`).
 */
export function verify(
  secrets: readonly string[],
  body: Uint8Array,
  signature: Buffer,
  prefix?: string,
): boolean {
  let ok = false;
  for (const secret of secrets) {
    const hmac = createHmac('sha512', secret);
    if (prefix !== undefined) hmac.update(prefix);
    // Taken as a 'binary' (latin1) string, a byte a character, and copied into a pooled Buffer: a
    // digest asked for as a Buffer gets memory of its own, a quarter of the HMAC's time (decision 0106).
    const expected = Buffer.from(hmac.update(body).digest('binary'), 'binary');
    // Every secret is checked, match or not, so timing says nothing about which one matched.
    if (signature.length === expected.length && timingSafeEqual(expected, signature)) ok = true;
  }
  return ok;
}

/**
 * The timestamped request signature (decision 0045), which binds the endpoint and the time:
 * `X-Polita-Signature: id=<partner id>,t=<Unix seconds>,v1=<hex HMAC-SHA512(secret,
 * "<t>.POST /v1/<endpoint>.<raw body>")>`. When present it is the header checked, and the
 * contract's X-Hmac-Signature is ignored (docs/api-reference.md#signing-requests).
 */
export const TIMESTAMPED_HEADER = 'x-polita-signature';
/** How far `t` may be from the real clock, either way. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/** What is signed before the body: `"<t>.POST /v1/<endpoint>."`, `t` exactly as sent. */
export const timestampedPrefix = (t: string, endpoint: string) => `${t}.POST /v1/${endpoint}.`;

/** The header value for a request to /v1/<endpoint> (`endpoint` without the /v1/), signed now by default. */
export function timestampedSignatureHeader(
  partnerId: string,
  secret: string,
  endpoint: string,
  body: string | Uint8Array,
  t: number = Math.floor(Date.now() / 1000),
): string {
  const v1 = createHmac('sha512', secret)
    .update(timestampedPrefix(String(t), endpoint))
    .update(body);
  return `id=${partnerId},t=${t},v1=${v1.digest('hex')}`;
}

const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Splits the timestamped header into its three parts, in any order; null when it is malformed: a
 * part missing, repeated, unknown or empty, a `t` that is not whole seconds, a `v1` that is not 128
 * lowercase hex digits. A repeated header arrives joined with ", " and is malformed too.
 */
export function parseTimestampedHeader(
  value: string,
): { partnerId: string; t: string; seconds: number; signature: Buffer } | null {
  const parts = new Map<string, string>();
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const name = part.slice(0, eq);
    if ((name !== 'id' && name !== 't' && name !== 'v1') || parts.has(name)) return null;
    parts.set(name, part.slice(eq + 1));
  }
  const partnerId = parts.get('id');
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!partnerId || /\s/.test(partnerId) || !t || !UNIX_SECONDS.test(t) || !v1 || !HEX_SIGNATURE.test(v1))
    return null;
  return { partnerId, t, seconds: Number(t), signature: Buffer.from(v1, 'hex') };
}

/**
 * The webhook signature beside the contract's X-Hmac-Signature (docs/api-reference.md#webhook-headers):
 * `t=<timestamp>,v1=…[,v1=…],v2=…[,v2=…]`, one of each per
 * valid secret, newest first. `v1` is HMAC-SHA512(secret, "<t>.<body>"), so a receiver can refuse
 * a replayed (old) delivery; `v2` is HMAC-SHA512(secret, "<t>.<event id>.<body>"), which also
 * covers the event id a receiver de-duplicates on (decision 0045).
 */
export function webhookSignature(
  secrets: readonly string[],
  timestamp: number,
  body: string,
  eventId: string,
): string {
  return [
    `t=${timestamp}`,
    ...secrets.map((s) => `v1=${sign(s, `${timestamp}.${body}`)}`),
    ...secrets.map((s) => `v2=${sign(s, `${timestamp}.${eventId}.${body}`)}`),
  ].join(',');
}
