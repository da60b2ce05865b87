import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, isoLocal, localDate, localDateTime } from '../../src/domain/time.ts';

const DAY_MS = 86_400_000;
const reference = {
  addDays: (date: string, days: number) =>
    new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10),
  localDateTime: (ms: number) =>
    new Intl.DateTimeFormat('sv-SE', {
      timeZone: 'Europe/Chisinau',
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).format(new Date(ms)),
};

/** The fast paths taken for the benchmark give exactly what the plain formulas give. */
describe('date arithmetic fast paths', () => {
  it('addDays agrees with Date.parse + toISOString, across month, year and leap-day edges', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('2999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: -4000, max: 4000 }),
        (d, days) => {
          const date = d.toISOString().slice(0, 10);
          expect(addDays(date, days)).toBe(reference.addDays(date, days));
        },
      ),
      { numRuns: 5000 },
    );
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
  });

  it('the remembered wall clock matches a fresh formatting, instants repeated or not', () => {
    const instants = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 });
    fc.assert(
      fc.property(fc.array(instants, { minLength: 1, maxLength: 100 }), (list) => {
        for (const ms of [...list, ...list]) {
          expect(localDateTime(ms)).toBe(reference.localDateTime(ms));
          expect(localDate(ms)).toBe(reference.localDateTime(ms).slice(0, 10));
        }
      }),
      { numRuns: 200 },
    );
    // Either side of the autumn change (03:00 EEST → 03:00 EET on 2026-10-25).
    expect(isoLocal(Date.parse('2026-10-25T00:30:00Z'))).toBe('2026-10-25T03:30:00.000+03:00');
    expect(isoLocal(Date.parse('2026-10-25T01:30:00Z'))).toBe('2026-10-25T03:30:00.000+02:00');
  });
});
