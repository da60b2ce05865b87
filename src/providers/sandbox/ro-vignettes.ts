import { lastIssuedRoVignette } from '../../db/repos/ro-vignettes.ts';
import type { Db } from '../../db/schema.ts';
import { addDays } from '../../domain/time.ts';
import type { ActiveRoVignette, RoVignetteRegistry } from '../types.ts';
import { TEST_VEHICLES } from './vehicles.ts';

/** Test vehicle 100000009 holds a vignette active until today + 5 days (decision 0020). */
const ACTIVE_TEST_VEHICLE = TEST_VEHICLES.find((v) => v.certificate === '100000009')!;

/**
 * The sandbox Romanian vignette registry: it knows the vignettes this service issued (read from
 * its own completed orders, as the real registry would know them) and the test vehicle's one.
 */
export class SandboxRoVignetteRegistry implements RoVignetteRegistry {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async findActive(q: {
    country: string;
    plate?: string;
    vin?: string;
    today: string;
    exceptOrder?: string;
  }): Promise<ActiveRoVignette | null> {
    const issued = await lastIssuedRoVignette(this.db, q);
    const test = this.testVignette(q);
    if (issued && test) return issued.endDate >= test.endDate ? issued : test;
    return issued ?? test;
  }

  private testVignette(q: { country: string; plate?: string; vin?: string; today: string }) {
    const v = ACTIVE_TEST_VEHICLE;
    const samePlate = q.country === 'MD' && q.plate?.replace(/\s+/g, '').toUpperCase() === v.plate;
    if (!samePlate && q.vin?.toUpperCase() !== v.vin) return null;
    // A 30-day category A vignette that ends today + 5 days.
    return { category: 'A', plate: v.plate, startDate: addDays(q.today, -24), endDate: addDays(q.today, 5) };
  }
}
