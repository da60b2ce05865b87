import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { deepFreeze } from '../domain/freeze.ts';
import { ageOn, daysBetween, endDateForMonths } from '../domain/time.ts';
import { Amount, Coefficient, convertedPrice, minorOf, mulCoefficient } from './pricing.ts';
import { insurerName, requireWindowStart } from './shared.ts';
import type { ProductContext } from './types.ts';

/**
 * Travel medical insurance tariff (catalogue/medical.json) and the trip rules quote and
 * create-order share. Premium per person = the region's daily rate × insured days × the
 * coefficients of age, activity, insured amount, company, additional risk and multi-trip
 * cover, never below the minimum premium; the policy's premium is the sum over the persons.
 */
export const ACTIVITIES = ['TRVL', 'WORK', 'BIZZ', 'STUDY', 'SKI', 'ADV'] as const;

export const MedicalCatalogueSchema = Type.Object({
  max_interval: Type.Integer({ minimum: 0 }),
  min_start_offset_days: Type.Integer({ minimum: 0 }),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  fee_mdl: Amount,
  max_trip_days: Type.Integer({ minimum: 1 }),
  minimum_premium: Amount,
  /** Ordered from the narrowest to the widest cover: a trip takes the widest region it touches. */
  regions: Type.Array(
    Type.Object({
      code: Type.String(),
      label: Type.String(),
      daily_rate: Amount,
      amounts: Type.Array(Type.String({ pattern: '^[0-9]+$' }), { minItems: 1 }),
      countries: Type.Array(Type.String({ pattern: '^[A-Z]{3}$' })),
    }),
    { minItems: 1 },
  ),
  excluded_countries: Type.Array(Type.String({ pattern: '^[A-Z]{3}$' })),
  amount_coefficients: Type.Record(Type.String(), Coefficient),
  age_bands: Type.Array(Type.Object({ max_age: Type.Integer({ minimum: 0 }), coefficient: Coefficient }), {
    minItems: 1,
  }),
  activity_coefficients: Type.Object(Object.fromEntries(ACTIVITIES.map((a) => [a, Coefficient]))),
  additional_risk: Type.Object({ text: Type.String(), coefficient: Coefficient }),
  multiple_trip: Type.Object({
    availability_months: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 }),
    coefficient: Coefficient,
  }),
  companies: Type.Array(
    Type.Object({
      id: Type.Integer(),
      company: Type.String(),
      coefficient: Coefficient,
      terms: Type.String({ pattern: '^https://' }),
      coverage: Type.Array(
        Type.Object({
          text: Type.String(),
          status: Type.Union([Type.Literal('included'), Type.Literal('excluded')]),
        }),
      ),
    }),
    { minItems: 1 },
  ),
});
export type MedicalCatalogue = Static<typeof MedicalCatalogueSchema>;
export type MedicalRegion = MedicalCatalogue['regions'][number];
export type MedicalCompany = MedicalCatalogue['companies'][number];

/** What get-offers and create-order both carry about the trip. */
export interface TripRequest {
  covered_territories: string[];
  start_date: string;
  end_date?: string;
  is_multiple_type: boolean;
  availability?: number;
  insured_days?: number;
  include_additional_risk: boolean;
  activity: (typeof ACTIVITIES)[number];
}

export interface Trip {
  region: MedicalRegion;
  startDate: string;
  endDate: string;
  /** Days the premium is charged for: the trip's days, or the insured days of a multi-trip cover. */
  insuredDays: number;
  ages: number[];
}

function regionOf(cat: MedicalCatalogue, territories: string[]): MedicalRegion {
  let widest = -1;
  for (const t of territories) {
    if (cat.excluded_countries.includes(t))
      throw productRule(`covered_territories: ${t} is the country of residence and cannot be covered`);
    const at = cat.regions.findIndex((r) => r.code === t || r.countries.includes(t));
    if (at < 0) throw productRule(`covered_territories: unknown territory ${t}`);
    widest = Math.max(widest, at);
  }
  return cat.regions[widest]!;
}

/** The trip's end and the days it is charged for: a single trip's dates, or a multi-trip cover's. */
function tripSpan(cat: MedicalCatalogue, req: TripRequest): { endDate: string; insuredDays: number } {
  if (!req.is_multiple_type) {
    if (!req.end_date) throw productRule('end_date is required for a single trip (is_multiple_type false)');
    if (req.end_date < req.start_date) throw productRule('end_date must not be before start_date');
    const insuredDays = daysBetween(req.start_date, req.end_date) + 1;
    if (insuredDays > cat.max_trip_days)
      throw productRule(`A single trip lasts at most ${cat.max_trip_days} days`);
    return { endDate: req.end_date, insuredDays };
  }
  if (req.availability === undefined || req.insured_days === undefined)
    throw productRule(
      'availability and insured_days are required for multiple trips (is_multiple_type true)',
    );
  const months = cat.multiple_trip.availability_months;
  if (!months.includes(req.availability))
    throw productRule(`availability must be one of ${months.join(', ')} months`);
  const endDate = endDateForMonths(req.start_date, req.availability);
  const span = daysBetween(req.start_date, endDate) + 1;
  if (req.insured_days > span)
    throw productRule(`insured_days must not exceed the ${span} days of the availability period`);
  return { endDate, insuredDays: req.insured_days };
}

/** A person's age on the trip's first day, when they may be insured. */
function ageOf(cat: MedicalCatalogue, req: TripRequest, birthday: string, i: number): number {
  if (birthday > req.start_date) throw productRule(`persons[${i}]: birthday ${birthday} is after start_date`);
  const age = ageOn(birthday, req.start_date);
  const oldest = cat.age_bands.at(-1)!.max_age;
  if (age > oldest) throw productRule(`persons[${i}]: persons older than ${oldest} cannot be insured`);
  return age;
}

/** The trip rules beyond the schema: single vs multiple trips, dates, ages; every refusal at once. */
export async function resolveTrip(
  ctx: ProductContext,
  cat: MedicalCatalogue,
  req: TripRequest,
  birthdays: string[],
): Promise<Trip> {
  const [region, , span, ages] = await checkAll(
    () => regionOf(cat, req.covered_territories),
    () => requireWindowStart(ctx, cat, req.start_date),
    () => tripSpan(cat, req),
    () => checkAll(...birthdays.map((b, i) => () => ageOf(cat, req, b, i))),
  );
  return { region, startDate: req.start_date, ...span, ages };
}

/**
 * The one pricing function of quote and create-order: for a trip, a function of company and insured
 * amount. Premium per person = daily rate × insured days, then × each coefficient in turn (age band,
 * activity, insured amount, company, additional risk, multiple trips), rounded half up at every
 * step; the steps that depend on neither company nor amount are taken once per person.
 */
export function medicalPricer(ctx: ProductContext, cat: MedicalCatalogue, req: TripRequest, trip: Trip) {
  const daily = minorOf(trip.region.daily_rate);
  const floor = minorOf(cat.minimum_premium);
  const activity = cat.activity_coefficients[req.activity]!;
  const perPerson = trip.ages.map((age) => {
    const band = cat.age_bands.find((b) => age <= b.max_age)!;
    return mulCoefficient(mulCoefficient(daily * trip.insuredDays, band.coefficient), activity);
  });
  const extras = [
    ...(req.include_additional_risk ? [cat.additional_risk.coefficient] : []),
    ...(req.is_multiple_type ? [cat.multiple_trip.coefficient] : []),
  ];
  return (company: MedicalCompany, amount: string) => {
    const amountCoefficient = cat.amount_coefficients[amount];
    if (!amountCoefficient) throw productRule(`No tariff for insured amount ${amount}`);
    let total = 0;
    for (const start of perPerson) {
      let premium = mulCoefficient(mulCoefficient(start, amountCoefficient), company.coefficient);
      for (const c of extras) premium = mulCoefficient(premium, c);
      total += Math.max(premium, floor);
    }
    return convertedPrice(ctx, total, cat.currency, cat.fee_mdl);
  };
}

export const companyName = (ctx: ProductContext, c: MedicalCompany) => insurerName(ctx, c.company);

type CoverageLine = MedicalCompany['coverage'][number];
const coverageMemo = new WeakMap<
  MedicalCompany,
  readonly [readonly CoverageLine[], readonly CoverageLine[]]
>();

/**
 * The company's coverage lines and the additional-risk line, included or not. The lists are built
 * once per catalogue company and frozen, so the get-offers serialiser encodes each of them once.
 */
export function coverageOf(
  cat: MedicalCatalogue,
  company: MedicalCompany,
  additionalRisk: boolean,
): readonly CoverageLine[] {
  let both = coverageMemo.get(company);
  if (!both) {
    const line = (status: 'included' | 'excluded') => ({ text: cat.additional_risk.text, status });
    const list = (status: 'included' | 'excluded') =>
      deepFreeze([...company.coverage.map((c) => ({ ...c })), line(status)]);
    both = [list('excluded'), list('included')] as const;
    coverageMemo.set(company, both);
  }
  return both[additionalRisk ? 1 : 0];
}
