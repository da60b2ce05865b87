import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import { MIGRATIONS_FOLDER } from '../../src/db/migrate.ts';

/**
 * A database as the service's first migration runner left it, before Kysely's: migrations 1 to
 * `upTo` applied in one transaction under its advisory lock, each recorded as a row of
 * `schema_migrations (version, name, applied_at)`, and no `kysely_migration` table.
 */
export async function migrateAsFirstRunner(url: string, upTo: number): Promise<void> {
  const files = readdirSync(MIGRATIONS_FOLDER)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .slice(0, upTo);
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  try {
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(72635411)`.execute(trx);
      await sql`create table if not exists schema_migrations (
        version integer primary key, name text not null, applied_at timestamptz not null default now())`.execute(
        trx,
      );
      for (const [i, file] of files.entries()) {
        const migration = (await import(join(MIGRATIONS_FOLDER, file))) as Migration;
        await migration.up(trx);
        await sql`insert into schema_migrations (version, name) values (${i + 1}, ${file.slice(5, -3)})`.execute(
          trx,
        );
      }
    });
  } finally {
    await db.destroy();
  }
}
