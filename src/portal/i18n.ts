import { readFileSync } from 'node:fs';
import i18next from 'i18next';

/**
 * The portal's languages (decision 0096): Romanian (the default), Russian and English, one message
 * catalogue each (`locales/<language>.json`), read through i18next. A user's choice is kept with the
 * user; before one is made, and before sign-in, `Accept-Language` decides, and Romanian when it names
 * none of the three. Dates, money and country names are Intl's, in the page's language.
 */
export const LANGUAGES = ['ro', 'ru', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'ro';

export const isLanguage = (v: unknown): v is Language => LANGUAGES.some((l) => l === v);

/** A catalogue: flat, its keys dotted by page (`sell.getOffers`), plural forms by i18next's suffixes. */
type Catalogue = Record<string, string>;

const readCatalogue = (language: Language): Catalogue => {
  const parsed: unknown = JSON.parse(
    readFileSync(new URL(`./locales/${language}.json`, import.meta.url), 'utf8'),
  );
  if (typeof parsed !== 'object' || parsed === null)
    throw new Error(`locales/${language}.json is no catalogue`);
  return parsed as Catalogue;
};

/** The catalogues as read, for the test that finds every key in all three. */
export const CATALOGUES: Record<Language, Catalogue> = {
  ro: readCatalogue('ro'),
  ru: readCatalogue('ru'),
  en: readCatalogue('en'),
};

const i18n = i18next.createInstance();
void i18n.init({
  resources: Object.fromEntries(LANGUAGES.map((l) => [l, { translation: CATALOGUES[l] }])),
  lng: DEFAULT_LANGUAGE,
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: [...LANGUAGES],
  initAsync: false,
  // The templates escape what they print (eta's autoEscape): escaping here too would double it.
  interpolation: { escapeValue: false },
  returnEmptyString: false,
  // Flat keys: a field's label is looked up by its request path (`field.foreign_vehicle.category`).
  keySeparator: false,
  nsSeparator: false,
});

/** A catalogue's message by key, with `{{name}}` values put in. */
export type T = (key: string, values?: Record<string, string | number>) => string;

const translators = new Map<Language, T>(
  LANGUAGES.map((l) => {
    const fixed = i18n.getFixedT(l);
    return [l, (key: string, values?: Record<string, string | number>) => String(fixed(key, values ?? {}))];
  }),
);

export const translator = (language: Language): T => translators.get(language)!;

/** Whether the catalogues hold a message for `key` (a label the desk looks up before its fallback). */
export const hasMessage = (key: string): boolean => i18n.exists(key, { lng: DEFAULT_LANGUAGE });

/**
 * The language an `Accept-Language` header prefers among the three (by its q weights, then its
 * order), or Romanian.
 */
export function languageOf(header: string | undefined): Language {
  if (!header) return DEFAULT_LANGUAGE;
  const ranked = header
    .split(',')
    .map((part, at) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { primary: tag.trim().toLowerCase().split('-')[0], q: q === undefined ? 1 : Number(q), at };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.at - b.at);
  return ranked.map((r) => r.primary).find(isLanguage) ?? DEFAULT_LANGUAGE;
}

/** The Intl locale of each language: English with day-first dates, as the other two. */
const LOCALES: Record<Language, string> = { ro: 'ro-MD', ru: 'ru-MD', en: 'en-GB' };

/** Dates, money and country names as Intl writes them in a language. */
export interface Formats {
  /** An amount in MDL (`1.454,40 MDL` in ro). */
  mdl(n: number): string;
  /** A calendar date `yyyy-mm-dd` as the language writes it (`03.09.2026` in ro and ru). */
  date(day: string | null | undefined): string;
  /** A local ISO-8601 time (`2026-09-03T14:05:09+03:00`) as date and time. */
  when(iso: string | null | undefined): string;
  /** A country's name by its ISO 3166 alpha-2 code. */
  country(iso2: string): string;
  json(v: unknown): string;
}

function formatsOf(language: Language): Formats {
  const locale = LOCALES[language];
  const money = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: 'MDL',
    currencyDisplay: 'code',
  });
  const day = new Intl.DateTimeFormat(locale, {
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const time = new Intl.DateTimeFormat(locale, {
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZone: 'UTC',
  });
  const regions = new Intl.DisplayNames([locale], { type: 'region', fallback: 'code' });
  // The wall-clock time the string says, whatever its offset: formatted as UTC, it stays as written.
  const wall = (text: string) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
    if (!m) return undefined;
    const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
    return new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  };
  return {
    mdl: (n) => money.format(n),
    date: (text) => {
      const at = text ? wall(text) : undefined;
      return at ? day.format(at) : (text ?? '');
    },
    when: (iso) => {
      const at = iso ? wall(iso) : undefined;
      return at ? time.format(at) : (iso ?? '');
    },
    country: (iso2) => (/^[A-Z]{2}$/.test(iso2) ? (regions.of(iso2) ?? iso2) : iso2),
    json: (v) => (v === null || v === undefined ? '' : JSON.stringify(v, null, 2)),
  };
}

const FORMATS = new Map<Language, Formats>(LANGUAGES.map((l) => [l, formatsOf(l)]));
export const formatsFor = (language: Language): Formats => FORMATS.get(language)!;
