import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { preparingPool } from '../../src/db/prepared-pool.ts';
import { testDatabaseUrl } from '../support/database.ts';

describe('the PostgreSQL pool that prepares repeated statements', () => {
  let db: Awaited<ReturnType<typeof testDatabaseUrl>>;
  let kysely: Kysely<Record<string, Record<string, unknown>>>;

  beforeAll(async () => {
    db = await testDatabaseUrl();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    kysely = new Kysely({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
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
