import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The database a test file runs on. With DATABASE_URL=postgres://… each test file gets a fresh
 * database on that server (dropped afterwards); otherwise an in-memory PGlite.
 */
export async function testDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.DATABASE_URL;
  if (!server || !/^postgres(ql)?:\/\//.test(server)) return { url: 'memory://', drop: async () => {} };
  const name = `polita_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: server });
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

export const onPostgres = (): boolean => /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
