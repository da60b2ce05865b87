import { sql } from 'kysely';
import type { Db } from '../database.ts';

/** Adds each key's requests of one window to the shared counters; answers the totals now stored. */
export async function addToWindows(
  db: Db,
  windowStart: Date,
  increments: { key: string; count: number }[],
): Promise<Map<string, number>> {
  if (increments.length === 0) return new Map();
  const { rows } = await sql<{ key: string; count: number }>`
    insert into rate_limit_counters (key, window_start, count)
    select k, ${windowStart}::timestamptz, c
    from unnest(${increments.map((i) => i.key)}::text[], ${increments.map((i) => i.count)}::int[]) as x(k, c)
    on conflict (key, window_start) do update set count = rate_limit_counters.count + excluded.count
    returning key, count`.execute(db);
  return new Map(rows.map((r) => [r.key, r.count]));
}

/** Windows that ended before `before` are of no use to anyone. */
export async function dropWindowsBefore(db: Db, before: Date): Promise<void> {
  await sql`delete from rate_limit_counters where window_start < ${before}`.execute(db);
}
