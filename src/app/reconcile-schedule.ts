import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { reconcile } from './reconcile.ts';

/** The advisory lock a reconciliation run holds: one instance at a time, whichever gets it. */
const RECONCILE_LOCK = 72635412;

export interface ReconciliationStatus {
  /** When the last run began, by the database's clock; undefined before the first. */
  ranAt: Date | undefined;
  differences: number;
}

/** The last run's outcome, as the metrics read it: one row by its key. */
export async function reconciliationStatus(db: Db): Promise<ReconciliationStatus> {
  const row = await db
    .selectFrom('reconciliation_status')
    .select(['ran_at', 'differences'])
    .executeTakeFirst();
  return { ranAt: row?.ran_at, differences: row?.differences ?? 0 };
}

/**
 * One reconciliation if none has begun within `intervalSeconds`, by any instance: the run holds an
 * advisory lock (another instance that checks meanwhile finds it taken and does nothing), and the
 * last run's start is read under it, by the database's clock, so instances' own clocks do not
 * matter. The outcome is stored for every instance's metrics (decision 0056).
 */
export async function reconcileIfDue(
  db: Db,
  intervalSeconds: number,
  log: Logger,
): Promise<'ran' | 'not due' | 'running elsewhere'> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(${sql.lit(RECONCILE_LOCK)}) as locked`.execute(conn);
    if (!rows[0]?.locked) return 'running elsewhere';
    try {
      const due = await sql<{ now: Date; due: boolean }>`
        select now() as now, coalesce(
          (select ran_at <= now() - make_interval(secs => ${intervalSeconds}) from reconciliation_status),
          true) as due`.execute(conn);
      const { now, due: isDue } = due.rows[0]!;
      if (!isDue) return 'not due';
      const started = performance.now();
      const result = await reconcile(db);
      const seconds = (performance.now() - started) / 1000;
      const n = result.differences.length;
      await conn
        .insertInto('reconciliation_status')
        .values({
          id: true,
          ran_at: now,
          differences: n,
          wallets: result.checked.wallets,
          orders: result.checked.orders,
          seconds,
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            ran_at: eb.ref('excluded.ran_at'),
            differences: eb.ref('excluded.differences'),
            wallets: eb.ref('excluded.wallets'),
            orders: eb.ref('excluded.orders'),
            seconds: eb.ref('excluded.seconds'),
          })),
        )
        .execute();
      const summary = { differences: n, ...result.checked, seconds: Math.round(seconds * 10) / 10 };
      if (n > 0) {
        log.error(
          { ...summary, first: result.differences.slice(0, 5) },
          'reconciliation found differences: run npm run reconcile to list them',
        );
      } else {
        log.info(summary, 'reconciliation: no differences');
      }
      return 'ran';
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(RECONCILE_LOCK)})`.execute(conn);
    }
  });
}

export interface Reconciler {
  stop(): Promise<void>;
}

/**
 * On every worker instance: a look every `min(interval, 60 s)`, the first one a look's time after
 * start, and a run when none has begun for `intervalSeconds`. A look that fails (the database
 * away) is logged and the next one tries again.
 */
export function startReconciler(db: Db, intervalSeconds: number, log: Logger): Reconciler {
  const everyMs = Math.min(intervalSeconds, 60) * 1000;
  let stopped = false;
  let running: Promise<unknown> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    if (stopped) return;
    running = reconcileIfDue(db, intervalSeconds, log)
      .catch((err: unknown) => {
        if (!stopped) log.warn({ err }, 'reconciliation could not run; the next look tries again');
      })
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(look, everyMs).unref();
      });
  };
  timer = setTimeout(look, everyMs).unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
