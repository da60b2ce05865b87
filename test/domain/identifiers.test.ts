import { describe, expect, it } from 'vitest';
import { hasValidCheckDigit, idnxProblem, isIdno, isIdnp, isIdnx } from '../../src/domain/idnx.ts';
import { ORDER_ID_PATTERN, orderId } from '../../src/domain/ids.ts';

describe('IDNP / IDNO check digit', () => {
  const valid = ['1021600002204', '1003600001232', '2003000000016', '2005123456783', '0990123456780'];

  it('accepts the documented test numbers and refuses any one-digit change of them', () => {
    for (const v of valid) {
      expect(hasValidCheckDigit(v)).toBe(true);
      const last = Number(v[12]);
      expect(hasValidCheckDigit(`${v.slice(0, 12)}${(last + 1) % 10}`)).toBe(false);
    }
  });

  it('tells a person (IDNP) from an organisation (IDNO)', () => {
    expect(isIdno('1021600002204')).toBe(true);
    expect(isIdnp('1021600002204')).toBe(false);
    expect(isIdnp('2003000000016')).toBe(true);
    expect(isIdnp('0990123456780')).toBe(true);
    expect(isIdnx('1003600001232')).toBe(true);
    expect(isIdnx('2003000000016')).toBe(true);
  });

  it('names the problem', () => {
    expect(idnxProblem('idnx', '123', 'idnx')).toBe('idnx must be 13 digits');
    expect(idnxProblem('idnx', '2003000000017', 'idnx')).toBe('idnx has an invalid check digit');
    expect(idnxProblem('idnp', '1021600002204', 'idnp')).toBe("idnp must be an IDNP (a person's number)");
    expect(idnxProblem('idnx', '2003000000016', 'idnx')).toBeNull();
    expect(idnxProblem('idnp', '2005123456783', 'idnp')).toBeNull();
  });
});

describe('order ids', () => {
  it('are prefix, six digits and three letters drawn from the random bytes', () => {
    const id = orderId('IAI', Uint8Array.from([0, 1, 2, 3, 4, 59, 0, 25, 26]));
    expect(id).toBe('IAI012349AZA');
    expect(id).toMatch(new RegExp(ORDER_ID_PATTERN));
    for (let i = 0; i < 200; i++) {
      const bytes = Uint8Array.from({ length: 9 }, (_, j) => (i * 31 + j * 97) % 256);
      expect(orderId('ROV', bytes)).toMatch(/^ROV\d{6}[A-Z]{3}$/);
    }
  });

  it('refuses a bad prefix or too little randomness', () => {
    expect(() => orderId('iai', new Uint8Array(9))).toThrow();
    expect(() => orderId('IA', new Uint8Array(9))).toThrow();
    expect(() => orderId('IAI', new Uint8Array(8))).toThrow();
  });
});
