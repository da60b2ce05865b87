import { describe, expect, it } from 'vitest';
import { parseSignatureHeader, sign, verify } from '../../src/signature.ts';

describe('the partner signature', () => {
  it('is the lowercase hex HMAC-SHA512 of the body (RFC 4231, test case 2)', () => {
    expect(sign('Jefe', 'what do ya want for nothing?')).toBe(
      '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737',
    );
    expect(sign('Jefe', Buffer.from('what do ya want for nothing?'))).toBe(
      sign('Jefe', 'what do ya want for nothing?'),
    );
  });

  it('verifies a signature made by sign() with any of the valid secrets, and nothing else', () => {
    const body = Buffer.from('{"id":"A1"}');
    const sig = Buffer.from(sign('new', body), 'hex');
    expect(verify(['old', 'new'], body, sig)).toBe(true);
    expect(verify(['new', 'old'], body, sig)).toBe(true);
    expect(verify(['old'], body, sig)).toBe(false);
    expect(verify([], body, sig)).toBe(false);
    expect(verify(['new'], Buffer.from('{"id":"A2"}'), sig)).toBe(false);
    expect(verify(['new'], body, sig.subarray(1))).toBe(false);
    expect(verify(['new'], body, Buffer.concat([sig, Buffer.alloc(1)]))).toBe(false);
  });

  it('verifies every byte of the digest, whatever its value (nearly all 256 values appear)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 64; i++) {
      const body = Buffer.from(`{"n":${i}}`);
      const sig = Buffer.from(sign('ключ-ș', body), 'hex');
      for (const b of sig) seen.add(b);
      expect(verify(['ключ-ș'], body, sig)).toBe(true);
      // One bit off in any byte is refused.
      const off = Buffer.from(sig);
      off[i] = off[i]! ^ 0x80;
      expect(verify(['ключ-ș'], body, off)).toBe(false);
    }
    expect(seen.size).toBeGreaterThan(240);
  });

  it('reads a header of a partner id and 128 lowercase hex digits, and refuses any other form', () => {
    const body = Buffer.from('{"id":"A1"}');
    const hex = sign('new', body);
    const parsed = parseSignatureHeader(`demo:${hex}`);
    expect(parsed?.partnerId).toBe('demo');
    expect(verify(['old', 'new'], body, parsed!.signature)).toBe(true);
    // The partner id is everything before the last colon.
    expect(parseSignatureHeader(`a:b:${hex}`)?.partnerId).toBe('a:b');
    for (const bad of [
      hex.slice(2),
      hex.slice(0, 126),
      `${hex}00`,
      hex.toUpperCase(),
      `${hex.slice(0, 127)}g`,
    ]) {
      expect(parseSignatureHeader(`demo:${bad}`)).toBeNull();
    }
    expect(parseSignatureHeader(`:${hex}`)).toBeNull();
    expect(parseSignatureHeader(hex)).toBeNull();
  });
});
