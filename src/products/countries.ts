import { productRule } from '../domain/errors.ts';

/**
 * ISO 3166 alpha-3 → alpha-2 for the countries whose vehicles and drivers the vignettes meet
 * (Europe, the CIS, the Caucasus, Turkey and the usual long-distance origins). Requests may name a
 * country either way; the service stores and returns the alpha-2 form.
 */
const ISO3_TO_ISO2: Record<string, string> = Object.fromEntries(
  (
    'ALB AL,AND AD,ARM AM,AUT AT,AZE AZ,BLR BY,BEL BE,BIH BA,BGR BG,HRV HR,CYP CY,CZE CZ,DNK DK,' +
    'EST EE,FIN FI,FRA FR,GEO GE,DEU DE,GRC GR,HUN HU,ISL IS,IRL IE,ITA IT,KAZ KZ,XKX XK,KGZ KG,' +
    'LVA LV,LIE LI,LTU LT,LUX LU,MLT MT,MDA MD,MCO MC,MNE ME,NLD NL,MKD MK,NOR NO,POL PL,PRT PT,' +
    'ROU RO,RUS RU,SMR SM,SRB RS,SVK SK,SVN SI,ESP ES,SWE SE,CHE CH,TJK TJ,TUR TR,TKM TM,UKR UA,' +
    'GBR GB,UZB UZ,VAT VA,ISR IL,USA US,CAN CA,CHN CN,JPN JP,KOR KR,IND IN,IRN IR,IRQ IQ,SYR SY,' +
    'LBN LB,JOR JO,EGY EG,MAR MA,TUN TN,DZA DZ,ARE AE,SAU SA,AUS AU,NZL NZ,BRA BR,ARG AR,MEX MX'
  )
    .split(',')
    .map((pair) => pair.split(' ') as [string, string]),
);
const KNOWN_ISO2 = new Set(Object.values(ISO3_TO_ISO2));

/** `ROU`, `ro` or `RO` → `RO`; an unknown code is refused with a reason naming the field. */
export function countryIso2(field: string, code: string): string {
  const upper = code.trim().toUpperCase();
  const iso2 = upper.length === 3 ? ISO3_TO_ISO2[upper] : upper;
  if (!iso2 || !KNOWN_ISO2.has(iso2))
    throw productRule(`${field} ${code} is not a known ISO2 or ISO3 country code`);
  return iso2;
}

/** A registration country of a foreign vehicle: any known country but Moldova. */
export function foreignCountryIso2(field: string, code: string, hint?: string): string {
  const iso2 = countryIso2(field, code);
  if (iso2 === 'MD') throw productRule(`${field} must not be MD${hint ? `: ${hint}` : ''}`);
  return iso2;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** A country's name in English, or its code when the name is not known. */
export const countryName = (iso2: string): string => regionNames.of(iso2) ?? iso2;

/** The alpha-2 code of an alpha-3 one, when it is one of the countries above. */
export const iso2Of = (iso3: string): string | undefined => ISO3_TO_ISO2[iso3];

/** Every country the service knows, as a form lists them: alpha-2 codes, by name. */
export const COUNTRY_CHOICES: readonly { value: string; label: string }[] = [...KNOWN_ISO2]
  .map((code) => ({ value: code, label: `${countryName(code)} (${code})` }))
  .sort((a, b) => a.label.localeCompare(b.label, 'en'));
