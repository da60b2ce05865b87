import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { fromPglite, type Db as IDatabase } from 'pg-boss';
import { lockDataDir } from './lock-file.ts';
import { migrations } from './migrations.ts';
import { Mutex } from './mutex.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { preparingPool } from './prepared-pool.ts';
import type { DB } from './schema.ts';

export type Db = Kysely<DB>;

/** What the rest of the service needs of the database, whichever engine is behind it. */
export interface Database {
  db: Db;
  engine: 'pglite' | 'postgres';
  /** How pg-boss reaches the same database: through the shared mutex on PGlite. */
  boss: { db: IDatabase; backend: 'pglite' } | { connectionString: string; backend: 'postgres' };
  close(): Promise<void>;
}

// int8 (count(*), bigint money, bigserial ids) as a number on both engines; amounts stay far
// below 2^53 bani.
const INT8 = 20;
pg.types.setTypeParser(INT8, (v) => Number.parseInt(v, 10));

export interface OpenOptions {
  /** Unset: embedded in dataDir; `memory://`: embedded in memory; `postgres://…`: a server. */
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL: send repeated query texts as named prepared statements (default true). */
  prepare?: boolean;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const url = opts.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url))
    return openPostgres(url, opts.poolSize ?? 20, opts.prepare ?? true);
  if (url && url !== 'memory://')
    throw new Error(`DATABASE_URL must be postgres://…, postgresql://… or memory://`);
  return openPglite(url === 'memory://' ? undefined : opts.dataDir);
}

async function openPostgres(connectionString: string, max: number, prepare: boolean): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max });
  // An idle client the server disconnects (restart, failover, pg_terminate_backend) emits 'error' on
  // the pool; without a listener that crashes the process. The pool drops the client and makes a new one.
  pool.on('error', (err) => process.emitWarning(`PostgreSQL dropped an idle connection: ${err.message}`));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: prepare ? preparingPool(pool) : pool }) });
  await sql`select 1`.execute(db);
  await migrate(db);
  return {
    db,
    engine: 'postgres',
    boss: { connectionString, backend: 'postgres' },
    close: () => db.destroy(),
  };
}

async function openPglite(dataDir: string | undefined): Promise<Database> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    // PGlite does not lock its directory and two processes on one directory corrupt it.
    unlock = lockDataDir(dataDir);
  }
  try {
    const pglite = await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      parsers: { [INT8]: (v: string) => Number.parseInt(v, 10) },
    });
    const mutex = new Mutex();
    const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex) });
    await migrate(db);
    const raw = fromPglite(pglite);
    const bossDb: IDatabase = {
      executeSql: (text, values) => mutex.run(() => raw.executeSql(text, values)),
      // pg-boss's LISTEN for job notifications, through the mutex like every statement. PGlite
      // delivers a NOTIFY (sent inside the transaction that enqueued the job) when that commits.
      async listen(channel, onNotification, onReconnect) {
        const unsubscribe = await mutex.run(() => pglite.listen(channel, onNotification));
        onReconnect();
        return { close: () => mutex.run(() => unsubscribe()) };
      },
    };
    return {
      db,
      engine: 'pglite',
      boss: { db: bossDb, backend: 'pglite' },
      close: async () => {
        await db.destroy();
        await mutex.run(() => pglite.close());
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** Forward-only migrations in one transaction under an advisory lock, so instances starting together take turns. */
export async function migrate(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(72635411)`.execute(trx);
    await sql`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`.execute(
      trx,
    );
    const done = await sql<{ version: number }>`select version from schema_migrations`.execute(trx);
    const applied = new Set(done.rows.map((r) => r.version));
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      // One statement at a time: PGlite's extended protocol takes a single statement per query.
      for (const statement of m.sql
        .split(/;\s*$/m)
        .map((x) => x.trim())
        .filter(Boolean)) {
        await sql.raw(statement).execute(trx);
      }
      await sql`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`.execute(trx);
    }
  });
}
