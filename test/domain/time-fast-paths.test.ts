import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  ageOn,
  daysBetween,
  isoLocal,
  isValidDate,
  localDate,
  localDateTime,
} from '../../src/domain/time.ts';

const DAY_MS = 86_400_000;
const reference = {
  addDays: (date: string, days: number) =>
    new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10),
  daysBetween: (a: string, b: string) =>
    Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS),
  isValidDate: (date: string) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return false;
    const ms = Date.parse(`${date}T00:00:00Z`);
    return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(date);
  },
  ageOn: (birthday: string, on: string) => {
    const [by, bm, bd] = birthday.split('-').map(Number) as [number, number, number];
    const [y, m, d] = on.split('-').map(Number) as [number, number, number];
    return y - by - (m < bm || (m === bm && d < bd) ? 1 : 0);
  },
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

  const anyDate = fc
    .date({
      min: new Date('0001-01-01T00:00:00Z'),
      max: new Date('2999-12-31T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString().slice(0, 10));

  it('daysBetween and ageOn agree with the Date.parse formulas', () => {
    fc.assert(
      fc.property(anyDate, anyDate, (a, b) => {
        expect(daysBetween(a, b)).toBe(reference.daysBetween(a, b));
        expect(ageOn(a, b)).toBe(reference.ageOn(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('isValidDate agrees with a Date.parse round trip, real dates or not', () => {
    const text = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
      )
      .map(
        ([y, m, d]) =>
          `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
      );
    fc.assert(
      fc.property(fc.oneof(text, anyDate, fc.string()), (date) => {
        expect(isValidDate(date)).toBe(reference.isValidDate(date));
      }),
      { numRuns: 5000 },
    );
    for (const d of ['2024-02-29', '2100-02-29', '2000-02-29', '2026-04-31', '2026-00-10', '1900-02-29'])
      expect(isValidDate(d)).toBe(reference.isValidDate(d));
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
