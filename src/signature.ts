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

/** Constant-time check against every currently valid secret (two during a rotation). */
export function verify(secrets: readonly string[], body: Uint8Array, signature: Buffer): boolean {
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha512', secret).update(body).digest();
    // Every secret is checked, match or not, so timing says nothing about which one matched.
    if (signature.length === expected.length && timingSafeEqual(expected, signature)) ok = true;
  }
  return ok;
}

/**
 * The webhook signature beside the spec's: `t=<timestamp>,v1=<hex HMAC-SHA512(secret, "<t>.<body>")>`,
 * one v1 per valid secret, newest first, so a receiver can refuse a replayed (old) delivery.
 */
export function webhookSignature(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${sign(s, `${timestamp}.${body}`)}`)].join(',');
}
