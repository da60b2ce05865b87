import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  forgetSecrets,
  hasCachedPads,
  HexSignature,
  hmacSha512,
  parseSignatureHeader,
  sign,
  verify,
  verifyHex,
} from '../../src/signature.ts';

describe('HMAC-SHA512 over cached pads', () => {
  const secrets = [
    '',
    'k',
    'a'.repeat(64),
    'b'.repeat(127),
    'c'.repeat(128),
    'd'.repeat(129),
    'e'.repeat(500),
    'șțăîâ€',
  ];
  const bodies = [Buffer.alloc(0), Buffer.from('{}'), randomBytes(111), randomBytes(112), randomBytes(5000)];

  it('is the bytes createHmac gives, for keys shorter than, as long as and longer than the block', () => {
    for (const secret of secrets) {
      for (const body of bodies) {
        expect(hmacSha512(secret, body).toString('hex')).toBe(
          createHmac('sha512', secret).update(body).digest('hex'),
        );
      }
    }
  });

  it('gives the same answer when called again and between other secrets (the pads are reused)', () => {
    const body = Buffer.from('{"product":"rca"}');
    const first = hmacSha512('x'.repeat(64), body).toString('hex');
    hmacSha512('y'.repeat(64), randomBytes(300));
    expect(hmacSha512('x'.repeat(64), body).toString('hex')).toBe(first);
    expect(hasCachedPads('x'.repeat(64))).toBe(true);
    forgetSecrets(['x'.repeat(64)]); // as when the partner changes: the pads are made again
    expect(hasCachedPads('x'.repeat(64))).toBe(false);
    expect(hasCachedPads('y'.repeat(64))).toBe(true);
    expect(hmacSha512('x'.repeat(64), body).toString('hex')).toBe(first);
  });

  it('verifies a signature made by sign() with any of the valid secrets, and nothing else', () => {
    const body = Buffer.from('{"id":"A1"}');
    const sig = Buffer.from(sign('new', body), 'hex');
    expect(verify(['old', 'new'], body, sig)).toBe(true);
    expect(verify(['old'], body, sig)).toBe(false);
    expect(verify(['new'], Buffer.from('{"id":"A2"}'), sig)).toBe(false);
    expect(verify(['new'], body, sig.subarray(1))).toBe(false);
  });

  it('verifies the hex of a header, decoded into one reused buffer, and refuses any other form', () => {
    const body = Buffer.from('{"id":"A1"}');
    const hex = sign('new', body);
    const parsed = parseSignatureHeader(`demo:${hex}`);
    expect(parsed?.partnerId).toBe('demo');
    expect(parsed?.signature.hex).toBe(hex);
    // A shorter or longer signature, or one in capitals, is not a signature at all: it never
    // reaches the buffer, so the bytes it held from the last one cannot complete it.
    for (const bad of [
      hex.slice(2),
      hex.slice(0, 126),
      `${hex}00`,
      hex.toUpperCase(),
      `${hex.slice(0, 127)}g`,
    ]) {
      expect(parseSignatureHeader(`demo:${bad}`)).toBeNull();
      expect(HexSignature.checked(bad)).toBeNull();
    }
    expect(parseSignatureHeader(`:${hex}`)).toBeNull();
    const signature = HexSignature.checked(hex)!;
    expect(verifyHex(['old', 'new'], body, signature)).toBe(true);
    expect(verifyHex(['old'], body, signature)).toBe(false);
    expect(verifyHex(['new'], Buffer.from('{"id":"A2"}'), signature)).toBe(false);
    expect(verifyHex(['new'], body, HexSignature.checked(sign('new', '{"id":"A2"}'))!)).toBe(false);
    expect(verifyHex(['new'], body, signature)).toBe(true);
  });
});
