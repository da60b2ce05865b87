import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabase } from './global-setup.ts';

/**
 * A fresh database for one test file, copied from the run's migrated template (global-setup.ts) on
 * the run's server: the embedded PostgreSQL, or the server of DATABASE_URL. Dropped by drop().
 * `empty`: a database with no table at all, as an operator's `createdb` makes it.
 */
export async function testDatabaseUrl(
  opts: { empty?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const { adminUrl, template } = inject('testDatabases');
  const name = `polita_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${opts.empty ? 'template0' : template}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      // Let the service's pools finish closing first: forcing the drop on a connection that is
      // still closing surfaces as an unhandled 57P01 in the test run.
      for (let i = 0; i < 50; i++) {
        const { rows } = await c.query('select count(*)::int as n from pg_stat_activity where datname = $1', [
          name,
        ]);
        if (rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
