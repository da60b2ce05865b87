/**
 * Calendar rules in the business time zone, Europe/Chisinau (EET/EEST). Instants are epoch
 * milliseconds passed in by the caller; dates are `yyyy-mm-dd` strings. Nothing here reads a clock.
 */
export const TIME_ZONE = 'Europe/Chisinau';
const DAY_MS = 86_400_000;

const partsFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: TIME_ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

interface WallClock {
  date: string;
  time: string;
}

// formatToParts is dear on get-offers' path (decision 0033); requests within one second ask for the
// same wall clock, so the last few answers are kept (by whole second, its precision).
const wallClockMemo = new Map<number, WallClock>();

function wallClock(ms: number): WallClock {
  const second = Math.floor(ms / 1000);
  const hit = wallClockMemo.get(second);
  if (hit) return hit;
  const p: Record<string, string> = {};
  for (const part of partsFormat.formatToParts(new Date(ms))) p[part.type] = part.value;
  const w = { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}:${p.second}` };
  if (wallClockMemo.size >= 64) wallClockMemo.clear();
  wallClockMemo.set(second, w);
  return w;
}

/** Offset of the zone from UTC at an instant, in minutes (120 in winter, 180 in summer). */
export function offsetMinutes(ms: number): number {
  const w = wallClock(ms);
  const asUtc = Date.parse(`${w.date}T${w.time}Z`);
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
}

export const localDate = (ms: number): string => wallClock(ms).date;
export const localDateTime = (ms: number): string => {
  const w = wallClock(ms);
  return `${w.date} ${w.time}`;
};

/** The instant at which the local wall clock shows `date time` (time `hh:mm:ss`). */
export function localInstant(date: string, time: string): number {
  const naive = Date.parse(`${date}T${time}Z`);
  // Two passes settle the offset even next to a daylight-saving change.
  let ms = naive - offsetMinutes(naive) * 60_000;
  ms = naive - offsetMinutes(ms) * 60_000;
  return ms;
}

/** Drafts die at 23:59:59 local time on their creation day. */
export const endOfBusinessDay = (ms: number): number => localInstant(localDate(ms), '23:59:59');

/** ISO-8601 with the zone's offset: 2026-09-30T12:00:00.000+03:00. */
export function isoLocal(ms: number): string {
  const w = wallClock(ms);
  const off = offsetMinutes(ms);
  const sign = off < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, '0');
  const mm = String(Math.abs(off) % 60).padStart(2, '0');
  const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, '0');
  return `${w.date}T${w.time}.${millis}${sign}${hh}:${mm}`;
}

const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;
const yearOf = (date: string) => Number(date.slice(0, 4));
const monthOf = (date: string) => Number(date.slice(5, 7));
const dayOf = (date: string) => Number(date.slice(8, 10));
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function isValidDate(date: string): boolean {
  if (!DATE_TEXT.test(date)) return false;
  const y = yearOf(date);
  const m = monthOf(date);
  const d = dayOf(date);
  return m >= 1 && m <= 12 && d >= 1 && d <= (m === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[m - 1]!);
}

/*
 * Dates as day numbers (days since 1970-01-01) and back, by the proleptic Gregorian calendar's
 * arithmetic (H. Hinnant's days_from_civil / civil_from_days): no Date object, no text parsing.
 * Through Date.parse, date arithmetic was a large share of get-offers' time (decision 0033).
 */
function dayNumber(date: string): number {
  const m = monthOf(date);
  const y = yearOf(date) - (m <= 2 ? 1 : 0);
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * ((m + 9) % 12) + 2) / 5) + dayOf(date) - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

function dateOfDayNumber(n: number): string {
  const z = n + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
}

export function addDays(date: string, days: number): string {
  const n = dayNumber(date) + days;
  // Before year 1 toISOString writes the expanded form (-000001-…): those (never sold) go through it.
  if (n < -719_162) return new Date(n * DAY_MS).toISOString().slice(0, 10);
  return dateOfDayNumber(n);
}

export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const target = new Date(Date.UTC(y, m - 1 + months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d, lastDay));
  return target.toISOString().slice(0, 10);
}

/** Whole days from a to b (b - a). */
export const daysBetween = (a: string, b: string): number => dayNumber(b) - dayNumber(a);

/**
 * Last covered day of a product of N days that starts on `start` (the start day counts):
 * 15 days from 2025-02-13 ends 2025-02-27; 365 days ends the day before the same date next year.
 */
export function endDateForDays(start: string, days: number): string {
  if (days === 365) return addDays(addMonths(start, 12), -1);
  return addDays(start, days - 1);
}

export const endDateForMonths = (start: string, months: number): string =>
  addDays(addMonths(start, months), -1);

/** 2025-07-03 → 03.07.2025, the Romanian display form. */
export function formatDmy(date: string): string {
  const [y, m, d] = date.split('-');
  return `${d}.${m}.${y}`;
}

/** Age in whole years on a given date. */
export function ageOn(birthday: string, on: string): number {
  const bm = monthOf(birthday);
  const m = monthOf(on);
  return yearOf(on) - yearOf(birthday) - (m < bm || (m === bm && dayOf(on) < dayOf(birthday)) ? 1 : 0);
}
