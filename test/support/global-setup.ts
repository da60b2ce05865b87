import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { DataDirInUseError } from '../../src/db/data-dir-lock.ts';
import {
  startEmbeddedServer,
  stopAbandonedServer,
  type EmbeddedServer,
} from '../../src/db/embedded-server.ts';
import { startBoss } from '../../src/jobs/queue.ts';
import { describeWarning } from './warnings.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where test files make their databases: a maintenance URL and the migrated template's name. */
    testDatabases: { adminUrl: string; template: string; server: 'embedded' | 'DATABASE_URL' };
  }
}

/**
 * Once per test run: the PostgreSQL server every test file uses (the embedded one in a temporary
 * directory, or the server of DATABASE_URL), and on it a template database with every migration and
 * pg-boss's schema, so a test file's own database is one CREATE DATABASE … TEMPLATE away.
 */
export default async function setup(project: TestProject) {
  // The setup prints no warning either (no-warnings.ts watches each test file's process).
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(describeWarning(w));
  process.on('warning', onWarning);
  let server: EmbeddedServer | undefined;
  let dir: string | undefined;
  const external = process.env.DATABASE_URL;
  if (external && !/^postgres(ql)?:\/\//.test(external)) {
    throw new Error(`DATABASE_URL must be postgres://… for the tests, got "${external}"`);
  }
  await sweepAbandonedTestServers();
  let adminUrl: string;
  if (external) {
    adminUrl = external;
  } else {
    dir = mkdtempSync(join(tmpdir(), TEST_DIR_PREFIX));
    // A throwaway cluster: durability buys nothing here, and fsync costs the suite its time.
    server = await startEmbeddedServer({
      dataDir: dir,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
    });
    adminUrl = server.adminConnectionString;
  }
  const template = `polita_tpl_${randomBytes(5).toString('hex')}`;
  await admin(adminUrl, `create database ${template}`);
  try {
    const database = await openDatabase({
      databaseUrl: withDatabase(adminUrl, template),
      dataDir: '',
      poolSize: 2,
    });
    const boss = await startBoss(database, pino({ level: 'silent' }));
    await boss.stop({ graceful: false, close: true, timeout: 1000 });
    await database.close();
    // A warning is emitted on the next tick.
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    if (warnings.length > 0)
      throw new Error(`process warnings in the test run's setup:\n${warnings.join('\n')}`);
  } catch (err) {
    await teardown();
    throw err;
  }
  project.provide('testDatabases', { adminUrl, template, server: external ? 'DATABASE_URL' : 'embedded' });

  async function teardown() {
    await admin(adminUrl, `drop database if exists ${template} with (force)`).catch(() => {});
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  return teardown;
}

const TEST_DIR_PREFIX = 'polita-test-pg-';

/**
 * A test run that was interrupted (Ctrl-C, a closed pipe) never ran its teardown, and its server
 * outlived it: stop those whose run is gone, and remove their directories.
 */
async function sweepAbandonedTestServers(): Promise<void> {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(TEST_DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    try {
      await stopAbandonedServer(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err; // another run's, still going
    }
  }
}

async function admin(url: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

/** The same server, another database: works for postgres://host/db and for socket URLs (?host=/dir). */
export function withDatabase(url: string, database: string): string {
  const m = /^(postgres(?:ql)?:\/\/[^/?#]*)(?:\/[^?#]*)?(.*)$/.exec(url);
  if (!m) throw new Error(`not a postgres:// URL: ${url}`);
  return `${m[1]}/${database}${m[2]}`;
}
