import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { sessionPool } from '../../src/db/session-pool.ts';
import { testDatabaseUrl } from '../support/database.ts';

describe('the PostgreSQL pool that prepares repeated statements', () => {
  let db: Awaited<ReturnType<typeof testDatabaseUrl>>;
  let kysely: Kysely<Record<string, Record<string, unknown>>>;

  beforeAll(async () => {
    db = await testDatabaseUrl();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    kysely = new Kysely({ dialect: new PostgresDialect({ pool: sessionPool(pool, { prepare: true }) }) });
    await sql`create table t (id int primary key, a text)`.execute(kysely);
    await sql`insert into t values (1, 'x')`.execute(kysely);
  });

  afterAll(async () => {
    await kysely?.destroy();
    await db?.drop();
  });

  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(kysely)).rows.map(
      (r) => r.statement,
    );

  it('prepares a parametrised text the second time it runs, and never one without parameters', async () => {
    const q = () => kysely.selectFrom('t').selectAll().where('id', '=', 1).execute();
    await q();
    expect(await prepared()).toEqual([]);
    expect(await q()).toEqual([{ id: 1, a: 'x' }]);
    expect(await prepared()).toEqual(['select * from "t" where "id" = $1']);
    // Several statements in one message go as a simple query (parameters are not allowed there).
    await sql.raw(`update t set a = 'y' where id = 1; select 1`).execute(kysely);
    expect((await q())[0]).toEqual({ id: 1, a: 'y' });
  });

  it('fails once after a migration changes a prepared statement’s result, then prepares it again', async () => {
    const q = () => kysely.selectFrom('t').selectAll().where('id', '=', 1).execute();
    await q();
    await sql`alter table t add column b int`.execute(kysely);
    await expect(q()).rejects.toMatchObject({ code: '0A000' });
    expect(await q()).toEqual([{ id: 1, a: 'y', b: null }]);
  });

  it('is what the service opens, unless PG_PREPARED_STATEMENTS=false asks for plain queries', async () => {
    for (const prepare of [true, false]) {
      const database = await openDatabase({ databaseUrl: db.url, dataDir: '', poolSize: 1, prepare });
      try {
        for (let i = 0; i < 2; i++)
          await database.db.selectFrom('orders').select('id').where('id', '=', 'X').execute();
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_prepared_statements`.execute(database.db);
        expect(rows[0]!.n > 0, `prepare: ${prepare}`).toBe(prepare);
      } finally {
        await database.close();
      }
    }
  });
});

describe('a pooled session the server terminated', () => {
  let db: Awaited<ReturnType<typeof testDatabaseUrl>>;
  let pool: pg.Pool;
  let kysely: Kysely<Record<string, Record<string, unknown>>>;
  let admin: pg.Client;

  beforeAll(async () => {
    db = await testDatabaseUrl();
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    // The pool's own listener for a session dying while idle (as the service has).
    pool.on('error', () => {});
    kysely = new Kysely({ dialect: new PostgresDialect({ pool: sessionPool(pool, { prepare: true }) }) });
    await sql`create table t (id int primary key)`.execute(kysely);
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await kysely?.destroy();
    await db?.drop();
  });

  /** Ends the pool's one session from the server side, the way pg_terminate_backend does in production. */
  const terminate = async () => {
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as done from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    expect(rows.length).toBeGreaterThan(0);
    // The session's FATAL message is in the client's socket before the next statement is sent.
    await new Promise((r) => setTimeout(r, 50));
  };

  it('runs a read or a BEGIN again on a fresh session, once', async () => {
    // Terminated while checked out and before its first statement, as when a request takes a
    // session from the pool at the instant the server ends it.
    await kysely.connection().execute(async (conn) => {
      await terminate();
      expect((await sql<{ n: number }>`select 1 as n`.execute(conn)).rows).toEqual([{ n: 1 }]);
    });
    await kysely.connection().execute(async (conn) => {
      await terminate();
      await sql`begin`.execute(conn);
      await sql`insert into t values (1)`.execute(conn);
      await sql`commit`.execute(conn);
    });
    expect((await sql<{ n: number }>`select count(*)::int as n from t`.execute(kysely)).rows).toEqual([
      { n: 1 },
    ]);
  });

  it('does not run a write again: its outcome is the caller’s to know', async () => {
    await kysely.connection().execute(async (conn) => {
      await terminate();
      await expect(sql`insert into t values (2)`.execute(conn)).rejects.toThrow(/connection/i);
    });
    expect((await sql<{ n: number }>`select count(*)::int as n from t`.execute(kysely)).rows).toEqual([
      { n: 1 },
    ]);
  });
});
