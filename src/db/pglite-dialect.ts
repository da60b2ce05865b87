import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { Mutex } from './mutex.ts';

/**
 * Kysely over PGlite where acquiring a connection takes the process-wide mutex and releasing it
 * gives it back. A transaction holds the lock from BEGIN to COMMIT, so nothing else (pg-boss
 * included) can interleave statements into it. (kysely-pglite has no such lock and lost
 * committed rows under concurrency in our spike.)
 */
class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const res = await this.pg.query<R>(query.sql, [...query.parameters], { rowMode: 'object' });
    return res.affectedRows === undefined
      ? { rows: res.rows }
      : { rows: res.rows, numAffectedRows: BigInt(res.affectedRows) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite');
  }
}

class PGliteDriver implements Driver {
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();
  private readonly connection: PGliteConnection;

  constructor(
    pg: PGlite,
    private readonly mutex: Mutex,
  ) {
    this.connection = new PGliteConnection(pg);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.mutex.acquire();
    // One physical session: the same object each time, guarded by the lock.
    this.releases.set(this.connection, release);
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const release = this.releases.get(conn);
    this.releases.delete(conn);
    release?.();
  }

  async destroy(): Promise<void> {}
}

export class PGliteDialect implements Dialect {
  constructor(
    private readonly pg: PGlite,
    private readonly mutex: Mutex,
  ) {}
  createAdapter = () => new PostgresAdapter();
  createDriver = () => new PGliteDriver(this.pg, this.mutex);
  createQueryCompiler = () => new PostgresQueryCompiler();
  createIntrospector = (db: Kysely<unknown>) => new PostgresIntrospector(db);
}
