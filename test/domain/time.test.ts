import { describe, expect, it } from 'vitest';
import {
  addMonths,
  ageOn,
  daysBetween,
  endDateForDays,
  endDateForMonths,
  endOfBusinessDay,
  formatDmy,
  isoLocal,
  isValidDate,
  localDate,
  localDateTime,
  localInstant,
  offsetMinutes,
} from '../../src/domain/time.ts';

const at = (iso: string) => Date.parse(iso);

describe('Europe/Chisinau calendar', () => {
  it('has EET (+02:00) in winter and EEST (+03:00) in summer', () => {
    expect(offsetMinutes(at('2026-01-15T12:00:00Z'))).toBe(120);
    expect(offsetMinutes(at('2026-07-15T12:00:00Z'))).toBe(180);
    expect(isoLocal(at('2026-11-21T10:00:00Z'))).toBe('2026-11-21T12:00:00.000+02:00');
    expect(isoLocal(at('2026-09-30T09:00:00.250Z'))).toBe('2026-09-30T12:00:00.250+03:00');
  });

  it('springs forward at 03:00 local on the last Sunday of March', () => {
    expect(isoLocal(at('2026-03-29T00:59:59Z'))).toBe('2026-03-29T02:59:59.000+02:00');
    expect(isoLocal(at('2026-03-29T01:00:00Z'))).toBe('2026-03-29T04:00:00.000+03:00');
    expect(endOfBusinessDay(at('2026-03-29T00:30:00Z'))).toBe(at('2026-03-29T23:59:59+03:00'));
    expect(endOfBusinessDay(at('2026-03-28T12:00:00Z'))).toBe(at('2026-03-28T23:59:59+02:00'));
  });

  it('falls back at 04:00 local on the last Sunday of October', () => {
    expect(isoLocal(at('2026-10-25T00:59:59Z'))).toBe('2026-10-25T03:59:59.000+03:00');
    expect(isoLocal(at('2026-10-25T01:00:00Z'))).toBe('2026-10-25T03:00:00.000+02:00');
    expect(endOfBusinessDay(at('2026-10-25T00:30:00Z'))).toBe(at('2026-10-25T23:59:59+02:00'));
    expect(endOfBusinessDay(at('2026-10-24T12:00:00Z'))).toBe(at('2026-10-24T23:59:59+03:00'));
  });

  it('takes the local date, not the UTC date, near midnight', () => {
    // 22:30 UTC on 21 November is 00:30 on the 22nd in Chisinau.
    expect(localDate(at('2026-11-21T22:30:00Z'))).toBe('2026-11-22');
    expect(localDateTime(at('2026-11-21T21:59:59Z'))).toBe('2026-11-21 23:59:59');
    expect(endOfBusinessDay(at('2026-11-21T22:30:00Z'))).toBe(at('2026-11-22T23:59:59+02:00'));
    expect(localInstant('2026-11-21', '23:59:59')).toBe(at('2026-11-21T23:59:59+02:00'));
    expect(localInstant('2026-07-01', '00:00:00')).toBe(at('2026-07-01T00:00:00+03:00'));
  });

  it('counts product periods including the start day', () => {
    expect(endDateForDays('2025-02-13', 15)).toBe('2025-02-27');
    expect(endDateForDays('2025-02-13', 1)).toBe('2025-02-13');
    expect(endDateForDays('2026-11-21', 365)).toBe('2027-11-20');
    expect(endDateForDays('2028-02-29', 365)).toBe('2029-02-27');
    expect(endDateForMonths('2026-01-31', 1)).toBe('2026-02-27');
    expect(endDateForMonths('2026-11-21', 12)).toBe('2027-11-20');
    expect(addMonths('2026-01-31', 1)).toBe('2026-02-28');
    expect(addMonths('2024-01-31', 1)).toBe('2024-02-29');
    expect(daysBetween('2026-11-21', '2027-05-20')).toBe(180);
  });

  it('validates, formats and ages dates', () => {
    expect(isValidDate('2026-02-29')).toBe(false);
    expect(isValidDate('2028-02-29')).toBe(true);
    expect(isValidDate('2026-13-01')).toBe(false);
    expect(isValidDate('21.11.2026')).toBe(false);
    expect(formatDmy('2025-07-03')).toBe('03.07.2025');
    expect(ageOn('2000-11-22', '2026-11-21')).toBe(25);
    expect(ageOn('2000-11-21', '2026-11-21')).toBe(26);
  });
});
