import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { RCA_QUOTE, startHarness, type Harness } from '../support/harness.ts';

/**
 * What the service's pools say when PostgreSQL ends their idle sessions, and what they never send.
 * A process warning during this file fails it (test/support/no-warnings.ts).
 */
let h: Harness;
const lines: { level: number; msg: string }[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
      done();
    },
  });
  h = await startHarness({ logger: createLogger('warn', sink) });
});
afterAll(() => h?.close());

describe('the database pools', () => {
  it('log the sessions PostgreSQL ended while idle at warn, in the service log, and go on', async () => {
    expect((await h.call('get-offers', RCA_QUOTE)).status).toBe(200);
    const admin = new pg.Client({ connectionString: h.databaseUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(
        `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and state = 'idle'`,
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    const dropped = () =>
      lines.filter((l) => l.msg.startsWith('PostgreSQL dropped an idle connection: terminating connection'));
    for (let i = 0; i < 100 && dropped().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(dropped().length).toBeGreaterThan(0);
    expect(dropped().every((l) => l.level === 40)).toBe(true);

    expect((await h.admin('GET', '/admin/partners/demo')).status).toBe(200);
  });

  it('refuse an invalid Date as a parameter before sending it, naming the parameter', async () => {
    const query = sql`select ${'x'}::text, ${new Date(Number.NaN)}::timestamptz`.execute(h.service.svc.db);
    await expect(query).rejects.toThrow(new TypeError('query parameter $2 is an invalid Date'));
  });
});
