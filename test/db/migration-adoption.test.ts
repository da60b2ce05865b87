import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate, MIGRATIONS_FOLDER } from '../../src/db/migrate.ts';
import { testDatabaseUrl } from '../support/database.ts';
import { migrateAsFirstRunner } from '../support/first-runner.ts';

/** Migrations run by Kysely's Migrator, adopting databases the first runner migrated (decision 0035). */
const FILES = readdirSync(MIGRATIONS_FOLDER)
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => f.slice(0, -3));

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** An empty database that records the tag of every DDL statement run on it from now on. */
async function emptyDatabase(): Promise<{ url: string; q: pg.Client; ddl(): Promise<string[]> }> {
  const db = await testDatabaseUrl({ empty: true });
  cleanups.push(() => db.drop());
  const q = new pg.Client({ connectionString: db.url });
  await q.connect();
  cleanups.push(() => q.end());
  return {
    url: db.url,
    q,
    async ddl() {
      return (await q.query<{ tag: string }>('select tag from ddl_log order by id')).rows.map((r) => r.tag);
    },
  };
}

/** From here on, every DDL statement on the database (even one that `if not exists` skips) is logged. */
async function logDdl(q: pg.Client): Promise<void> {
  await q.query(`
    create table ddl_log (id serial primary key, tag text not null);
    create function log_ddl() returns event_trigger language plpgsql as $$
    begin
      insert into ddl_log (tag) values (tg_tag);
    end
    $$;
    create event trigger log_ddl on ddl_command_start execute function log_ddl();`);
}

/** A folder of migration files (file name without `.ts` → its source), removed after the tests. */
function migrationFolder(files: Record<string, string>): string {
  const folder = mkdtempSync(join(tmpdir(), 'polita-migrations-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  for (const [name, source] of Object.entries(files)) writeFileSync(join(folder, `${name}.ts`), source);
  return folder;
}

/** The source of a migration that executes one Kysely builder. */
const migrationRunning = (builder: string) =>
  `export async function up(db) {\n  await ${builder}.execute();\n}\n`;

/** The migrations of `folder` run on `url` as the service runs its own. */
async function migrateFolder(url: string, folder: string): Promise<void> {
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  try {
    await migrate(db, folder);
  } finally {
    await db.destroy();
  }
}

const open = async (url: string) =>
  (await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1 })).close();

const recorded = async (q: pg.Client) =>
  (await q.query<{ name: string }>('select name from kysely_migration order by name')).rows.map(
    (r) => r.name,
  );

const firstRunnerRows = async (q: pg.Client) =>
  (await q.query('select version, name, applied_at from schema_migrations order by version')).rows;

/**
 * The first runner's migrations, 1 to 15, in a folder of their own: adoption concerns them alone, and
 * the migrations after them would add their own statements to what these tests count.
 */
const FIRST_RUNNER_FILES = FILES.filter((name) => Number(name.slice(0, 4)) <= 15);
const adopt = (url: string) =>
  migrateFolder(
    url,
    migrationFolder(
      Object.fromEntries(
        FIRST_RUNNER_FILES.map((name) => [
          name,
          `export { up } from '${join(MIGRATIONS_FOLDER, `${name}.ts`)}';\n`,
        ]),
      ),
    ),
  );

describe('migrations on a database the first runner migrated', () => {
  it('runs none of migrations 1 to 15 again, records them as applied and keeps the data', async () => {
    const { url, q, ddl } = await emptyDatabase();
    await migrateAsFirstRunner(url, 15);
    await q.query(`insert into settings (key, value, updated_at) values ('kept', '"yes"', now())`);
    const before = await firstRunnerRows(q);
    await logDdl(q);

    await adopt(url);

    // Kysely's two tables of its own, and not one statement of a migration.
    expect(await ddl()).toEqual(['CREATE TABLE', 'CREATE TABLE']);
    expect(await recorded(q)).toEqual(FIRST_RUNNER_FILES);
    expect(await firstRunnerRows(q)).toEqual(before);
    expect((await q.query(`select value from settings where key = 'kept'`)).rows).toEqual([{ value: 'yes' }]);

    await adopt(url);
    expect(await ddl()).toEqual(['CREATE TABLE', 'CREATE TABLE']);
  });

  it('applies only what the first runner had not: migration 15 on a database it left at 14', async () => {
    const { url, q, ddl } = await emptyDatabase();
    await migrateAsFirstRunner(url, 14);
    await logDdl(q);

    await adopt(url);

    expect(await ddl()).toEqual(['CREATE TABLE', 'CREATE TABLE', 'CREATE INDEX', 'CREATE INDEX']);
    expect(await recorded(q)).toEqual(FIRST_RUNNER_FILES);
    const indexes = await q.query(
      `select indexname from pg_indexes where indexname in ('orders_id_hash', 'order_items_order_hash')`,
    );
    expect(indexes.rowCount).toBe(2);
  });

  it('adopts it once when several instances start on it together', async () => {
    const { url, q, ddl } = await emptyDatabase();
    await migrateAsFirstRunner(url, 14);
    await logDdl(q);

    await Promise.all([adopt(url), adopt(url), adopt(url), adopt(url)]);

    expect(await ddl()).toEqual(['CREATE TABLE', 'CREATE TABLE', 'CREATE INDEX', 'CREATE INDEX']);
    expect(await recorded(q)).toEqual(FIRST_RUNNER_FILES);
  });

  it('waits while an instance of the version before migrates (it holds the same advisory lock)', async () => {
    const { url, q, ddl } = await emptyDatabase();
    await migrateAsFirstRunner(url, 14);
    await logDdl(q);
    const older = new pg.Client({ connectionString: url });
    await older.connect();
    cleanups.push(() => older.end());
    await older.query('begin');
    await older.query('select pg_advisory_xact_lock(72635411)');

    let opened = false;
    const starting = adopt(url).then(() => (opened = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(opened).toBe(false);
    expect(await ddl()).toEqual([]);
    await older.query('commit');
    await starting;

    expect(await recorded(q)).toEqual(FIRST_RUNNER_FILES);
  });

  it('runs a migration added after the adoption on the next start, once', async () => {
    const { url, q, ddl } = await emptyDatabase();
    await migrateAsFirstRunner(url, 15);
    await open(url);
    await logDdl(q);
    // The service's migrations and one more file after them, as the next version would ship it.
    const next = `${String(FILES.length + 1).padStart(4, '0')}-next`;
    const folder = migrationFolder({
      ...Object.fromEntries(
        FILES.map((name) => [name, `export { up } from '${join(MIGRATIONS_FOLDER, `${name}.ts`)}';\n`]),
      ),
      [next]: migrationRunning(`db.schema.createTable('next_table').addColumn('id', 'integer')`),
    });

    await migrateFolder(url, folder);
    await migrateFolder(url, folder);

    expect(await ddl()).toEqual(['CREATE TABLE']);
    expect(await recorded(q)).toEqual([...FILES, next]);
  });
});

describe('migrations on a new database', () => {
  it('run once when several instances start on it together', async () => {
    const { url, q } = await emptyDatabase();
    await Promise.all([open(url), open(url), open(url)]);
    expect(await recorded(q)).toEqual(FILES);
    expect((await q.query(`select to_regclass('schema_migrations') as t`)).rows).toEqual([{ t: null }]);
  });

  it('roll back every migration of the run when one fails, and say which', async () => {
    const { url, q } = await emptyDatabase();
    const folder = migrationFolder({
      '0001-table': migrationRunning(`db.schema.createTable('first_table').addColumn('id', 'integer')`),
      '0002-broken': migrationRunning(`db.schema.alterTable('no_such_table').addColumn('id', 'integer')`),
    });
    await expect(migrateFolder(url, folder)).rejects.toThrow(
      'migration 0002-broken failed: relation "no_such_table" does not exist',
    );
    expect((await q.query(`select to_regclass('first_table') as t`)).rows).toEqual([{ t: null }]);
    expect(await recorded(q)).toEqual([]);
  });

  it('refuse files whose numbers leave a gap, naming them', async () => {
    const { url } = await emptyDatabase();
    const folder = migrationFolder({
      '0001-first': 'export async function up() {}\n',
      '0003-third': 'export async function up() {}\n',
    });
    await expect(migrateFolder(url, folder)).rejects.toThrow(
      'migration files are numbered 0001, 0002, … without gaps or repeats: found 0001-first, 0003-third',
    );
  });
});
