import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  FileMigrationProvider,
  Migrator,
  sql,
  type Kysely,
  type Migration,
  type MigrationProvider,
} from 'kysely';

/**
 * The migrations: one file a migration in `migrations/`, named `NNNN-what.ts` and numbered from
 * 0001 without gaps, each exporting `up(db)`. Forward-only: a migration that has shipped is never
 * edited, the next change is the next file. They stay within PostgreSQL 15's SQL: the embedded
 * server is 15, and operators may run 15 themselves (decision 0035).
 */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * Every version of the service takes this lock to migrate, so instances starting together take
 * turns, and an instance of a version from before Kysely's runner (which holds it in its migration
 * transaction) never migrates beside this one.
 */
const MIGRATION_LOCK = 72635411;

/**
 * Migrations 1 to 15 were applied by the service's first runner, which recorded them in
 * `schema_migrations (version, name, applied_at)`. Kysely records what it ran in
 * `kysely_migration`; a database the first runner migrated is adopted as it is: each of these
 * migrations that `schema_migrations` lists is recorded by Kysely without running (decision 0035).
 */
const FIRST_RUNNER_LAST = 15;

/**
 * Brings the schema up to date: the migrations not yet applied, in one transaction, on one
 * connection that holds the migrations' lock meanwhile. A migration that fails rolls them all back
 * and throws, naming it.
 */
export async function migrate<T>(db: Kysely<T>, folder = MIGRATIONS_FOLDER): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK)})`.execute(conn);
    try {
      const migrator = new Migrator({
        db: conn,
        provider: new NumberedMigrations(folder),
        // Kysely orders the applied migrations by the time each instance's clock wrote down: two
        // hosts whose clocks disagree could make it refuse to start. The numbering is checked
        // (NumberedMigrations), and pending migrations still run in it.
        allowUnorderedMigrations: true,
      });
      const { error, results } = await migrator.migrateToLatest();
      if (error !== undefined) {
        const failed = results?.find((r) => r.status === 'Error')?.migrationName;
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(failed ? `migration ${failed} failed: ${reason}` : `migrations: ${reason}`, {
          cause: error,
        });
      }
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK)})`.execute(conn);
    }
  });
}

/** The migration files of a folder, checked to be numbered 0001, 0002, … without a gap or a repeat. */
class NumberedMigrations implements MigrationProvider {
  private readonly files: FileMigrationProvider;

  constructor(folder: string) {
    this.files = new FileMigrationProvider({ fs, path, migrationFolder: folder });
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const found = await this.files.getMigrations();
    const names = Object.keys(found).sort();
    const firstRunner = new FirstRunnerRecords();
    return Object.fromEntries(
      names.map((name, i) => {
        const version = i + 1;
        if (!name.startsWith(`${String(version).padStart(4, '0')}-`)) {
          throw new Error(
            `migration files are numbered 0001, 0002, … without gaps or repeats: found ${names.join(', ')}`,
          );
        }
        const migration = found[name]!;
        if (version > FIRST_RUNNER_LAST) return [name, migration];
        return [
          name,
          {
            async up(db) {
              if (!(await firstRunner.applied(db, version))) await migration.up(db);
            },
          },
        ];
      }),
    );
  }
}

/** The versions the first runner recorded, read once, on the first migration that asks. */
class FirstRunnerRecords {
  private versions: Promise<Set<number>> | undefined;

  async applied(db: Kysely<unknown>, version: number): Promise<boolean> {
    this.versions ??= (async () => {
      const { rows } = await sql<{
        found: string | null;
      }>`select to_regclass('schema_migrations')::text as found`.execute(db);
      if (rows[0]?.found == null) return new Set<number>();
      const recorded = await sql<{ version: number }>`select version from schema_migrations`.execute(db);
      return new Set(recorded.rows.map((r) => r.version));
    })();
    return (await this.versions).has(version);
  }
}
