import { sql } from 'kysely';
import type { Db } from '../schema.ts';

export interface IssuedRoVignette {
  category: string;
  plate: string;
  startDate: string;
  endDate: string;
}

/**
 * The RO vignettes this service issued (completed orders) for a vehicle, by plate within its
 * registration country or by VIN, still valid on `today`: the one ending last.
 */
export async function lastIssuedRoVignette(
  db: Db,
  q: { country: string; plate?: string; vin?: string; today: string; exceptOrder?: string },
): Promise<IssuedRoVignette | null> {
  if (!q.plate && !q.vin) return null;
  const plate = q.plate?.replace(/\s+/g, '').toUpperCase() ?? null;
  const vin = q.vin?.toUpperCase() ?? null;
  let query = db
    .selectFrom('order_items as i')
    .innerJoin('orders as o', 'o.id', 'i.order_id')
    .select([
      sql<string>`i.details->>'category'`.as('category'),
      sql<string>`i.issued->>'plate_number'`.as('plate'),
      'i.start_date',
      'i.end_date',
    ])
    .where('i.product', '=', 'vignette:ro')
    .where('o.status', '=', 'completed')
    .where('i.issued', 'is not', null)
    .where('i.end_date', '>=', q.today)
    .where((eb) =>
      eb.or([
        eb.and([
          eb(sql`i.issued->>'country'`, '=', q.country),
          eb(sql`upper(replace(i.issued->>'plate_number', ' ', ''))`, '=', plate),
        ]),
        eb(sql`upper(i.issued->>'vin_code')`, '=', vin),
      ]),
    )
    .orderBy('i.end_date', 'desc')
    .limit(1);
  if (q.exceptOrder) query = query.where('o.id', '!=', q.exceptOrder);
  const row = await query.executeTakeFirst();
  if (!row?.start_date || !row.end_date) return null;
  return { category: row.category, plate: row.plate, startDate: row.start_date, endDate: row.end_date };
}
