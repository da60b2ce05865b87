import { productRule } from './errors.ts';
import { formatDmy, localInstant } from './time.ts';

/**
 * The Romanian road vignette (rovinieta) and its two dated changes (decision 0010):
 * - from the emission restriction (25 Sep 2026) only E0 and EC are sold and a declared class is ignored;
 * - from the tariff switch (1 Oct 2026) categories A–D, durations 1/10/30/60/365, a price per
 *   emission class, a VIN for every vehicle, and no vignette for goods vehicles over 3.5 t.
 * Pure rules: the instant to judge comes in as an argument, tariffs come in as catalogue data.
 */

export const EMISSION_CLASSES = ['E0', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'EC'] as const;
export type EmissionClass = (typeof EMISSION_CLASSES)[number];

/**
 * The contract's year rule (docs/api-reference.md#vignettero): the first year of manufacture a class
 * can be declared for.
 */
const MIN_YEAR: Partial<Record<EmissionClass, number>> = { E4: 2003, E5: 2008, E6: 2011 };

export const NO_VIGNETTE = 'No Vignette found.';
export const NO_VIN =
  'The vehicle has no VIN or chassis number in the registry; the RO vignette cannot be issued without one';
export const TARIFF_CHANGED =
  'The RO vignette price on this order is no longer valid (the vignette tariff system changed); create a new order';

export interface Regime {
  /** Only E0/EC are sold; a declared class outside the configured list is ignored (the contract's rule). */
  restricted: boolean;
  /** The tariff system of 1 October 2026 (categories A–D, price per class, VIN required). */
  newTariff: boolean;
}

/** Local Europe/Chisinau wall-clock instants `yyyy-mm-ddThh:mm` of the two changes. */
export interface RegimeInstants {
  emission_restriction_from: string;
  new_tariff_from: string;
}

export const DEFAULT_INSTANTS: RegimeInstants = {
  emission_restriction_from: '2026-09-25T00:00',
  new_tariff_from: '2026-10-01T00:00',
};

export function localWallInstant(text: string): number {
  const [date, time] = text.split('T') as [string, string];
  return localInstant(date, time.length === 5 ? `${time}:00` : time);
}

export function regimeAt(now: number, at: RegimeInstants = DEFAULT_INSTANTS): Regime {
  return {
    restricted: now >= localWallInstant(at.emission_restriction_from),
    newTariff: now >= localWallInstant(at.new_tariff_from),
  };
}

/** What the rules need to know of a vehicle, MD-registered or foreign. */
export interface RoVehicle {
  md: boolean;
  euCategory: string;
  massKg?: number;
  seats?: number;
  /** Year of manufacture; only the MD registry knows it. */
  year?: number;
  electric: boolean;
}

const GOODS = /^(N[123]|O[1-4])$/;
const LIGHT_GOODS_MAX_KG = 3500;
const PASSENGER_MAX_SEATS = 23;

/**
 * The vignette categories a vehicle can buy: none for motorcycles, nor (from the switch) for goods
 * vehicles over 3.5 t. The registry knows no axle count, so a goods vehicle of 12 t or more gets
 * both E (at most 3 axles) and F (at least 4) under the old system and the buyer picks.
 */
export function vignetteCategories(v: RoVehicle, newTariff: boolean): string[] {
  if (v.euCategory === 'M1') return ['A'];
  if (v.euCategory === 'M2' || v.euCategory === 'M3') {
    const big = (v.seats ?? 0) > PASSENGER_MAX_SEATS;
    if (newTariff) return [big ? 'D' : 'C'];
    return [big ? 'H' : 'G'];
  }
  if (GOODS.test(v.euCategory)) {
    const kg = v.massKg ?? 0;
    if (kg <= LIGHT_GOODS_MAX_KG) return ['B'];
    if (newTariff) return [];
    if (kg <= 7500) return ['C'];
    if (kg < 12_000) return ['D'];
    return ['E', 'F'];
  }
  return [];
}

export interface EmissionRequest {
  emission_class?: string | undefined;
  emission_proof_declared?: boolean | undefined;
}

/**
 * The emission class a quote or order is for, applying the contract's rules in their order
 * (docs/api-reference.md#vignettero): the code,
 * then the declaration, then the year. While restricted, a class not in `soldOnDeclaration` is
 * ignored (E0, or EC for a registry-electric MD vehicle) and neither declaration nor year is asked.
 */
export function resolveEmissionClass(
  req: EmissionRequest,
  v: RoVehicle,
  regime: Regime,
  soldOnDeclaration: readonly string[],
): EmissionClass {
  let asked: EmissionClass = 'E0';
  if (req.emission_class !== undefined) {
    const code = req.emission_class.trim().toUpperCase();
    if (!(EMISSION_CLASSES as readonly string[]).includes(code)) throw productRule('Invalid emission_class');
    asked = code as EmissionClass;
  }
  if (v.md && v.electric) return 'EC';
  if (regime.restricted && !soldOnDeclaration.includes(asked)) return 'E0';
  if (asked !== 'E0' && req.emission_proof_declared !== true) {
    throw productRule('emission_class requires emission_proof_declared');
  }
  const minYear = MIN_YEAR[asked];
  if (v.md && minYear !== undefined && v.year !== undefined && v.year < minYear) {
    throw productRule(`Emission class ${asked} requires a vehicle manufactured in ${minYear} or later`);
  }
  return asked;
}

/** Old tariff: category → duration → EUR. New tariff: category → duration → class → EUR. */
export type OldTariffs = Record<string, Record<string, string>>;
export type NewTariffs = Record<string, Record<string, Record<EmissionClass, string>>>;

/** Every duration sold for a category under the regime, with its EUR tariff text, shortest first. */
export function tariffsFor(
  t: { old: OldTariffs; new: NewTariffs },
  newTariff: boolean,
  category: string,
  cls: EmissionClass,
): { duration: number; eur: string }[] {
  const rows = newTariff
    ? Object.entries(t.new[category] ?? {}).map(([d, byClass]) => ({
        duration: Number(d),
        eur: byClass[cls],
      }))
    : Object.entries(t.old[category] ?? {}).map(([d, eur]) => ({ duration: Number(d), eur }));
  return rows
    .filter((r): r is { duration: number; eur: string } => typeof r.eur === 'string')
    .sort((a, b) => a.duration - b.duration);
}

/** ISO 3779: 17 letters and digits, never I, O or Q. */
export const VIN_PATTERN = '^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$';

export function activeVignetteMessage(a: {
  category: string;
  plate: string;
  startDate: string;
  endDate: string;
}): string {
  return (
    `Pentru vehicul categorie ${a.category} nr.inmatriculare ${a.plate}, exista rovinieta activa ` +
    `in perioada ${formatDmy(a.startDate)} - ${formatDmy(a.endDate)}`
  );
}

/** Foreign-vehicle attributes required by category, in the wording partners see. */
export function foreignVehicleProblem(f: {
  category: string;
  max_authorized_mass?: number | undefined;
  places?: number | undefined;
}): string | null {
  if (GOODS.test(f.category) && f.max_authorized_mass === undefined) {
    return `foreign_vehicle.max_authorized_mass is required for category ${f.category}`;
  }
  if ((f.category === 'M2' || f.category === 'M3') && f.places === undefined) {
    return `foreign_vehicle.places is required for category ${f.category}`;
  }
  return null;
}
