import type { EuCategory } from '../domain/vehicle.ts';

/**
 * Ports to the outside world. Only providers/ would talk to real registries and insurers; the
 * sandbox implementations behave like them in-process.
 */
export type Fuel = 'petrol' | 'diesel' | 'electric' | 'hybrid' | 'lpg';

/** A vehicle as the Moldovan registry knows it, looked up by its 9-digit certificate number. */
export interface RegisteredVehicle {
  certificate: string;
  plate: string;
  make: string;
  model: string;
  year: number;
  category: EuCategory;
  maxMassKg: number;
  seats: number;
  fuel: Fuel;
  engineCc: number;
  /** VIN, or chassis or body number; null when the registry holds none. */
  vin: string | null;
  owner: { name: string; idnx: string; locality: string };
}

export interface VehicleRegistry {
  /** null when the registry has no such vehicle. */
  find(certificate: string): Promise<RegisteredVehicle | null>;
}

/** A provider refused the purchase for good: the order fails, no retry. */
export class ProviderRejection extends Error {
  override name = 'ProviderRejection';
}

/** A purchase from an insurer or vignette registry. */
export interface IssueRequest {
  product: string;
  orderId: string;
  idx: number;
  /** The certificate of an MD vehicle the product covers, if any. */
  vehicle?: string;
  /** Used by the sandbox to recognise a foreign vehicle, a plate or VIN. */
  plate?: string;
  vin?: string;
  startDate?: string;
  endDate?: string;
  company?: string;
}

export interface IssueReceipt {
  /** The provider's registry number for the policy or vignette. */
  transactionId: string;
  /** Policy or vignette series/number as printed. */
  series: string;
}

/** A policy the provider issued, to cancel: what it was issued for and the provider's number. */
export interface CancelRequest {
  product: string;
  orderId: string;
  idx: number;
  transactionId?: string;
  vehicle?: string;
  plate?: string;
  vin?: string;
}

/** A provider refused to cancel a policy: nothing was cancelled. */
export class CancellationRefused extends Error {
  override name = 'CancellationRefused';
}

export interface Issuer {
  issue(req: IssueRequest): Promise<IssueReceipt>;
  /**
   * Cancels an issued policy; rejects with CancellationRefused when the provider will not. Asking
   * again for a policy already cancelled succeeds (a retried request).
   */
  cancel(req: CancelRequest): Promise<void>;
  /**
   * Issues a policy again with corrected fields (`revision` counts the corrections, from 1): the
   * provider's new numbers replace the old policy, which it voids. Rejects with ProviderRejection.
   */
  reissue(req: IssueRequest & { revision: number; transactionId?: string }): Promise<IssueReceipt>;
}

/** An RO vignette in the Romanian registry, valid on the day asked about or later. */
export interface ActiveRoVignette {
  /** Vignette category letter it was issued for. */
  category: string;
  plate: string;
  startDate: string;
  endDate: string;
}

/** The Romanian vignette registry: which vehicles already hold a vignette. */
export interface RoVignetteRegistry {
  /** The vignette valid on `today` or later that ends last, by plate (with country) or VIN; null when none. */
  findActive(q: {
    country: string;
    plate?: string;
    vin?: string;
    today: string;
    /** The order whose vignette is being corrected: its own vignette is not in the way. */
    exceptOrder?: string;
  }): Promise<ActiveRoVignette | null>;
}

export interface Providers {
  vehicles: VehicleRegistry;
  issuer: Issuer;
  roVignettes: RoVignetteRegistry;
}
