import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Db as IDatabase } from 'pg-boss';
import { DatabaseHealth } from './availability.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { embeddedConnectionString, startEmbeddedServer, type EmbeddedServer } from './embedded-server.ts';
import { migrate } from './migrate.ts';
import { sessionPool } from './session-pool.ts';
import type { DB, Db } from './schema.ts';

export type { Db };

/** The service's PostgreSQL: its pool as Kysely, and pg-boss's database port. */
export interface Database {
  db: Db;
  /**
   * pg-boss's own statements (polling, maintenance, its queue lookups) run on a small pool of their
   * own. A job is enqueued inside the caller's transaction, and an enqueue whose queue is not in
   * pg-boss's cache looks it up on another connection: on one shared pool, a burst of 50
   * confirm-orders held all 20 connections in transactions that each waited for a 21st, and the
   * service stopped answering (decision 0018). Jobs still commit with the change that causes them.
   */
  boss: IDatabase;
  /** Where the data is: the embedded server's socket URL (for pg_dump), or DATABASE_URL. */
  connectionString: string;
  /** The embedded server this process started and stops on close; undefined on DATABASE_URL. */
  embedded: EmbeddedServer | undefined;
  /** Whether the database answers now, as this process last found (decision 0050). */
  health: DatabaseHealth;
  close(): Promise<void>;
}

// int8 (count(*), bigint money, bigserial ids) as a number; amounts stay far below 2^53 bani.
const INT8 = 20;
pg.types.setTypeParser(INT8, (v) => Number.parseInt(v, 10));

export interface OpenOptions {
  /** Unset: the embedded server of dataDir; `postgres://…`: that server. */
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Send repeated query texts as named prepared statements (default true). */
  prepare?: boolean;
  /**
   * The operator command line: when a service already runs the embedded server of dataDir, use that
   * server instead of refusing.
   */
  joinRunning?: boolean;
  /** The embedded server's start and stop, and sessions the server ended while idle (warn). */
  log?: (message: string, level?: 'info' | 'warn') => void;
}

type Log = NonNullable<OpenOptions['log']>;

/**
 * Opens the database and brings its schema up to date. With no DATABASE_URL this starts (and on
 * close stops) the embedded PostgreSQL server of DATA_DIR; after that, nothing tells the two apart.
 */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const pool = { max: opts.poolSize ?? 20, prepare: opts.prepare ?? true, log: opts.log ?? (() => {}) };
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, pool, undefined);
  let server: EmbeddedServer | undefined;
  try {
    server = await startEmbeddedServer({
      dataDir: opts.dataDir,
      detached: true,
      // The service's server is started again if it dies under it (decision 0051).
      restart: true,
      ...(opts.log ? { log: opts.log } : {}),
    });
  } catch (err) {
    if (!(opts.joinRunning && err instanceof DataDirInUseError)) throw err;
  }
  try {
    return await openPostgres(
      server?.connectionString ?? embeddedConnectionString(opts.dataDir),
      pool,
      server,
    );
  } catch (err) {
    await server?.stop();
    throw err;
  }
}

async function openPostgres(
  connectionString: string,
  opts: { max: number; prepare: boolean; log: Log },
  embedded: EmbeddedServer | undefined,
): Promise<Database> {
  const health = new DatabaseHealth(connectionString, opts.log);
  const pool = newPool(connectionString, opts.max, opts.log, health);
  const jobsPool = newPool(connectionString, JOB_POOL_SIZE, opts.log, health);
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: sessionPool(pool, { prepare: opts.prepare }) }),
  });
  const close = async () => {
    health.close();
    await db.destroy();
    await jobsPool.end();
    await embedded?.stop();
  };
  try {
    await sql`select 1`.execute(db).catch((err: { code?: string; message?: string }) => {
      if (err.code !== '3D000') throw err;
      throw new Error(
        `${err.message}: create it first (for example: createdb -h <host> -U <user> <name>, or CREATE DATABASE), ` +
          'then start again; the service makes its tables itself.',
        { cause: err },
      );
    });
    await migrate(db);
  } catch (err) {
    health.close();
    await db.destroy().catch(() => {});
    await jobsPool.end().catch(() => {});
    throw err;
  }
  return {
    db,
    boss: { executeSql: (text, values) => jobsPool.query(text, values as unknown[]) },
    connectionString,
    embedded,
    health,
    close,
  };
}

const JOB_POOL_SIZE = 4;
/**
 * How long a statement waits for a connection (a new one, or one of the pool's when all are busy):
 * a request that needs the database answers within 5 s even when it cannot be reached (decision
 * 0050), and a refused connection fails at once anyway.
 */
export const CONNECT_TIMEOUT_MS = 3000;

function newPool(connectionString: string, max: number, log: Log, health: DatabaseHealth): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle client the server disconnects (restart, failover, pg_terminate_backend) emits 'error' on
  // the pool; without a listener that crashes the process. The pool drops the client and makes a
  // new one; the operator reads why in the service's log, at warn: the first of a burst, as the
  // health probe then says when the server answers again (one line each way, not one a session).
  pool.on('error', (err) => {
    if (health.up) log(`PostgreSQL dropped an idle connection: ${err.message}`, 'warn');
    health.report(err);
  });
  // A session ended right after it connected can have its error read in the same chunk as its
  // ReadyForQuery: after the pool has stopped listening for it and before whoever asked for the
  // session can, and pg emits it with nobody listening (an uncaught exception, seen in
  // test/db/terminated-under-load.test.ts). Every session keeps a listener from the start;
  // the next statement on a dead one fails and is retried or thrown as usual.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** One round trip: is the database answering? */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
