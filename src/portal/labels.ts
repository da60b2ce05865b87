import iso from 'i18n-iso-countries';
import { iso2Of } from '../products/countries.ts';
import { hasMessage, type Formats, type T } from './i18n.ts';

/**
 * Request fields and their choices in words, in the page's language
 * (docs/decisions/0060-sales-desk-forms-from-schemas.md, 0096-portal-languages.md). A field's path
 * (`foreign_vehicle.category`, a row of a list as `persons[]`) is looked up in the catalogue whole
 * (`field.foreign_vehicle.category`), then by its last name (`field.category`); test/portal/sell.test.ts
 * fails when a field of a product has neither, so a field added to a schema needs its words.
 */
export interface DeskWords {
  t: T;
  f: Formats;
  label(path: string): string;
  /** The catalogue's help for a field, if it has one (never the schema's, which speaks to integrators). */
  help(path: string): string | undefined;
  /** A value the clerk chooses, in words. */
  choice(path: string, value: string): string;
  /** A country by an ISO alpha-2 or alpha-3 code, or a region of the catalogue by its code. */
  place(code: string): string;
}

/** Fallback for a field without words (test/portal/sell.test.ts fails for a product's field). */
const spaced = (name: string) => {
  const s = name
    .replace(/\[\]$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replaceAll('_', ' ')
    .toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
};

const lastOf = (path: string) => path.split('.').at(-1)!;

/** The first catalogue key of `keys` that holds a message. */
const firstKey = (keys: readonly string[]) => keys.find((k) => hasMessage(k));

/** Whether a field's path names a label in the catalogue (whole, or by its last name). */
export const hasLabel = (path: string): boolean => !!firstKey([`field.${path}`, `field.${lastOf(path)}`]);

/** Fields whose values are counts of days. */
const DAYS = new Set(['duration', 'insured_days']);

export function deskWords(t: T, f: Formats): DeskWords {
  const place = (code: string) => {
    if (hasMessage(`territory.${code}`)) return t(`territory.${code}`);
    const iso2 = code.length === 3 ? (iso2Of(code) ?? iso.alpha3ToAlpha2(code)) : code;
    return iso2 ? f.country(iso2) : code;
  };
  return {
    t,
    f,
    place,
    label: (path) => {
      const key = firstKey([`field.${path}`, `field.${lastOf(path)}`]);
      return key ? t(key) : spaced(lastOf(path));
    },
    help: (path) => {
      const key = firstKey([`help.${path}`, `help.${lastOf(path)}`]);
      return key ? t(key) : undefined;
    },
    choice: (path, value) => {
      const last = lastOf(path);
      const key = firstKey([`choice.${path}.${value}`, `choice.${last}.${value}`]);
      if (key) return t(key);
      if (value === 'true') return t('choice.yes');
      if (value === 'false') return t('choice.no');
      if (DAYS.has(last) && /^\d+$/.test(value)) return t('choice.days', { count: Number(value) });
      if (/(^|\.)(country|registration_country|residence_country|covered_territories)$/.test(path)) {
        return place(value);
      }
      return value;
    },
  };
}
