import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  forgetSecrets,
  hasCachedPads,
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

  it('verifies the hex of a header, decoded into one reused buffer, and refuses any other length', () => {
    const body = Buffer.from('{"id":"A1"}');
    const hex = sign('new', body);
    expect(parseSignatureHeader(`demo:${hex}`)).toEqual({ partnerId: 'demo', signature: hex });
    expect(parseSignatureHeader(`demo:${hex.slice(2)}`)).toBeNull();
    expect(verifyHex(['old', 'new'], body, hex)).toBe(true);
    // A shorter signature must not be completed by the bytes the buffer held from the last one.
    expect(verifyHex(['new'], body, hex.slice(0, 126))).toBe(false);
    expect(verifyHex(['new'], body, `${hex}00`)).toBe(false);
    expect(verifyHex(['new'], body, hex.toUpperCase())).toBe(false);
    expect(verifyHex(['new'], Buffer.from('{"id":"A2"}'), hex)).toBe(false);
    expect(verifyHex(['new'], body, hex)).toBe(true);
  });
});
