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
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export const onPostgres = (): boolean => /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
