import { createHmac, hash, timingSafeEqual } from 'node:crypto';

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

/** A signature checked to be 128 lowercase hex digits: nothing else can be made one. */
export class HexSignature {
  readonly hex: string;
  private constructor(hex: string) {
    this.hex = hex;
  }
  /** The signature, or null when `hex` is not 128 lowercase hex digits. */
  static checked(hex: string): HexSignature | null {
    return HEX_SIGNATURE.test(hex) ? new HexSignature(hex) : null;
  }
}

/**
 * Splits `<partner id>:<128 hex>`; null when the header is not of that form. The signature stays
 * hex until {@link verifyHex} decodes it, rather than a Buffer made for every request.
 */
export function parseSignatureHeader(value: string): { partnerId: string; signature: HexSignature } | null {
  const colon = value.lastIndexOf(':');
  if (colon <= 0) return null;
  const signature = HexSignature.checked(value.slice(colon + 1));
  if (!signature) return null;
  return { partnerId: value.slice(0, colon), signature };
}

/** SHA-512's block: an HMAC key is padded (or first hashed) to this length. */
const BLOCK = 128;

/** A secret's HMAC pads: the key XOR 0x36, and XOR 0x5c with room for the inner digest after it. */
interface Pads {
  inner: Buffer;
  outer: Buffer;
}
const padsOf = new Map<string, Pads>();

function pads(secret: string): Pads {
  let p = padsOf.get(secret);
  if (p) return p;
  let key = Buffer.from(secret, 'utf8');
  if (key.length > BLOCK) key = hash('sha512', key, 'buffer');
  p = { inner: Buffer.alloc(BLOCK, 0x36), outer: Buffer.alloc(BLOCK + 64, 0x5c) };
  for (let i = 0; i < key.length; i++) {
    p.inner[i]! ^= key[i]!;
    p.outer[i]! ^= key[i]!;
  }
  // Only the secrets of partners who sign requests; a service restart or rotation leaves a few behind.
  if (padsOf.size >= 10_000) padsOf.clear();
  padsOf.set(secret, p);
  return p;
}

/**
 * Drops the cached pads of these secrets (they are as good as the secret): called when a partner
 * changes, so a rotated-out or disabled partner's key material does not stay behind. The next
 * request signed with one of them computes its pads again.
 */
export function forgetSecrets(secrets: readonly string[]): void {
  for (const secret of secrets) padsOf.delete(secret);
}

/** Whether the pads of this secret are cached (for the tests of forgetSecrets' callers). */
export function hasCachedPads(secret: string): boolean {
  return padsOf.has(secret);
}

/**
 * HMAC-SHA512 (RFC 2104) as two one-shot hashes over the secret's cached pads, written into `into`
 * at `at`: the same bytes as createHmac, which looks the digest up by name, fetches it from
 * OpenSSL's provider and pads the key again for every request. Each digest comes back as a latin1
 * ('binary') string, one character a byte, and is written where it goes: asked for a Buffer, Node
 * makes one with memory of its own for each digest, which costs more than the hash of a short body.
 */
function hmacInto(secret: string, body: Uint8Array, into: Buffer, at: number): void {
  const p = pads(secret);
  const inner = hash('sha512', Buffer.concat([p.inner, body]), 'binary');
  // The outer pad's tail holds the inner digest: written in place, as nothing runs in between.
  p.outer.write(inner, BLOCK, 'latin1');
  into.write(hash('sha512', p.outer, 'binary'), at, 'latin1');
}

export function hmacSha512(secret: string, body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(64);
  hmacInto(secret, body, out, 0);
  return out;
}

const EXPECTED = Buffer.alloc(64);

/** Constant-time check against every currently valid secret (two during a rotation). */
export function verify(secrets: readonly string[], body: Uint8Array, signature: Buffer): boolean {
  let ok = false;
  for (const secret of secrets) {
    hmacInto(secret, body, EXPECTED, 0);
    // Every secret is checked, match or not, so timing says nothing about which one matched.
    if (signature.length === 64 && timingSafeEqual(EXPECTED, signature)) ok = true;
  }
  return ok;
}

const DECODED = Buffer.alloc(64);

/**
 * {@link verify} of a signature as parseSignatureHeader gives it: already checked to be 128 hex
 * digits, so decoding it into this one reused buffer overwrites all 64 bytes (nothing of the last
 * request's signature can complete a shorter one) and needs no second look.
 */
export function verifyHex(secrets: readonly string[], body: Uint8Array, signature: HexSignature): boolean {
  DECODED.write(signature.hex, 0, 'hex');
  return verify(secrets, body, DECODED);
}

/**
 * The webhook signature beside the spec's: `t=<timestamp>,v1=<hex HMAC-SHA512(secret, "<t>.<body>")>`,
 * one v1 per valid secret, newest first, so a receiver can refuse a replayed (old) delivery.
 */
export function webhookSignature(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${sign(s, `${timestamp}.${body}`)}`)].join(',');
}
