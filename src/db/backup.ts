import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import pg from 'pg';
import { DataDirInUseError } from './data-dir-lock.ts';
import { embeddedConnectionString, startEmbeddedServer, type EmbeddedServer } from './embedded-server.ts';

/**
 * Backups with PostgreSQL's own tools (decision 0055): `pg_dump -Fc` of the whole database the
 * service uses (its tables, pg-boss's schema and jobs, the encrypted partner secrets), and
 * `pg_restore` of such a file into an empty database. The secret key is not in the file: it is
 * kept beside it.
 */

/** The backup or the restore cannot be made as asked; the message says why and what to do. */
export class BackupRefused extends Error {
  override name = 'BackupRefused';
}

/** The tools are missing or the database cannot be reached: nothing was done. */
export class BackupUnavailable extends Error {
  override name = 'BackupUnavailable';
}

export interface Target {
  databaseUrl: string | undefined;
  dataDir: string;
  log?: (message: string, level?: 'info' | 'warn') => void;
}

/** Where Debian installs each major version's client tools beside each other. */
const DEBIAN_DIR = (major: number) => `/usr/lib/postgresql/${major}/bin`;

/**
 * pg_dump or pg_restore of PostgreSQL `major`: Debian's versioned directory first (PATH may hold
 * another version's wrapper), then PATH, taking only a binary that says it is that major version.
 * A pg_dump older than the server refuses to dump it, and a pg_restore older than the pg_dump
 * that wrote a file cannot read it: one major version on both sides keeps both true.
 */
export function findPgTool(
  tool: 'pg_dump' | 'pg_restore',
  major: number,
  where: { dirs?: string[]; path?: string } = {},
): string {
  const dirs = [
    ...(where.dirs ?? [DEBIAN_DIR(major)]),
    ...(where.path ?? process.env.PATH ?? '').split(delimiter).filter(Boolean),
  ];
  const seen: string[] = [];
  for (const dir of dirs) {
    const file = join(dir, tool);
    if (!existsSync(file)) continue;
    const version = spawnSync(file, ['--version'], { encoding: 'utf8' });
    const found = /\(PostgreSQL\) (\d+)/.exec(version.stdout ?? '')?.[1];
    if (version.status === 0 && Number(found) === major) return file;
    seen.push(`${file} (${found ? `PostgreSQL ${found}` : 'does not run'})`);
  }
  throw new BackupUnavailable(
    `${tool} of PostgreSQL ${major} was not found${seen.length ? `; found only ${seen.join(', ')}` : ''}. ` +
      `Install it: on Debian or Ubuntu, apt-get install postgresql-client-${major} (it goes to ` +
      `${DEBIAN_DIR(major)}); elsewhere, your system's PostgreSQL ${major} client package.`,
  );
}

/** The server's major version (15 for 15.x). */
async function serverMajor(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
  return Math.floor(Number(rows[0]!.v) / 10_000);
}

/**
 * A libpq connection for a child process: the URL without its password, which goes in PGPASSWORD
 * (a command line is visible to every user of the machine, the environment only to its owner).
 */
function libpq(connectionString: string): { url: string; env: NodeJS.ProcessEnv } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The embedded server's URL has no host part (its socket is a parameter), and no password.
  if (!URL.canParse(connectionString)) return { url: connectionString, env };
  const u = new URL(connectionString);
  if (u.password) {
    env.PGPASSWORD = decodeURIComponent(u.password);
    u.password = '';
  }
  return { url: u.toString(), env };
}

/** The database of DATABASE_URL, or the embedded server of DATA_DIR: joined if it runs, else started. */
async function connect(
  target: Target,
  purpose: 'backup' | 'restore',
): Promise<{ connectionString: string; server: EmbeddedServer | undefined }> {
  if (target.databaseUrl) return { connectionString: target.databaseUrl, server: undefined };
  const dataDir = resolve(target.dataDir);
  if (purpose === 'backup' && !existsSync(join(dataDir, 'pg', 'PG_VERSION'))) {
    throw new BackupRefused(
      `DATA_DIR ${dataDir} holds no database to back up (no ${join(dataDir, 'pg')}): is DATA_DIR the service's?`,
    );
  }
  try {
    const server = await startEmbeddedServer({
      dataDir,
      detached: true,
      ...(target.log ? { log: target.log } : {}),
    });
    return { connectionString: server.connectionString, server };
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    if (purpose === 'restore') {
      throw new BackupRefused(
        `DATA_DIR ${dataDir} is in use by a running service${err.pid ? ` (pid ${err.pid})` : ''}: ` +
          'restore into a DATA_DIR no service runs on (stop the service, or restore into a new DATA_DIR)',
      );
    }
    // The service runs its server: the backup reads it through the same socket.
    return { connectionString: embeddedConnectionString(dataDir), server: undefined };
  }
}

async function withClient<T>(connectionString: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new BackupUnavailable(`cannot connect to the database: ${(err as Error).message}`);
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function runTool(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((res) => {
    let output = '';
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) => res({ code: -1, output: err.message }));
    child.on('close', (code) => res({ code, output }));
  });
}

export interface BackupResult {
  file: string;
  bytes: number;
  seconds: number;
  postgresql: number;
}

/**
 * `pg_dump -Fc` of the whole database, while the service runs: one snapshot (pg_dump's repeatable
 * read transaction), so everything committed before it began is in the file and nothing half-made
 * is. Written beside `file` and renamed into place when complete: a file of that name is always a
 * whole backup.
 */
export async function backupDatabase(target: Target, file: string): Promise<BackupResult> {
  const out = resolve(file);
  const started = performance.now();
  const { connectionString, server } = await connect(target, 'backup');
  try {
    const major = await withClient(connectionString, serverMajor);
    const pgDump = findPgTool('pg_dump', major);
    const { url, env } = libpq(connectionString);
    const partial = `${out}.partial`;
    // Customers' names and phones, hashed tokens, sealed secrets: readable by this user only.
    writeFileSync(partial, '', { mode: 0o600 });
    chmodSync(partial, 0o600);
    const r = await runTool(pgDump, ['--format=custom', '--file', partial, '--dbname', url], env);
    if (r.code !== 0) {
      rmSync(partial, { force: true });
      throw new BackupUnavailable(`pg_dump failed (exit ${r.code}): ${r.output.trim().slice(-2000)}`);
    }
    renameSync(partial, out);
    return {
      file: out,
      bytes: statSync(out).size,
      seconds: round((performance.now() - started) / 1000),
      postgresql: major,
    };
  } finally {
    await server?.stop();
  }
}

export interface RestoreResult {
  file: string;
  /** The database restored into: DATA_DIR's embedded one, or DATABASE_URL's name. */
  into: string;
  seconds: number;
}

/** Tables, sequences and views outside PostgreSQL's own schemas: what `createdb` makes has none. */
async function userRelations(client: pg.Client): Promise<{ n: number; some: string[] }> {
  const { rows } = await client.query<{ name: string }>(
    `select n.nspname || '.' || c.relname as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'S', 'v', 'm', 'f')
        and n.nspname not in ('pg_catalog', 'information_schema')
        and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp%'
      order by 1`,
  );
  return { n: rows.length, some: rows.slice(0, 3).map((r) => r.name) };
}

/**
 * `pg_restore` of a backup into an empty database (the service stopped), in one transaction: it
 * is all there or nothing is. A database that holds any table is refused before anything is
 * written: a restore never mixes two services' data. Ends with ANALYZE, so the first queries are
 * planned on statistics.
 */
export async function restoreDatabase(target: Target, file: string): Promise<RestoreResult> {
  const input = resolve(file);
  if (!existsSync(input) || !statSync(input).isFile()) {
    throw new BackupRefused(`${input} is not a file`);
  }
  const started = performance.now();
  const { connectionString, server } = await connect(target, 'restore');
  try {
    const into = target.databaseUrl
      ? `database ${decodeURIComponent(new URL(target.databaseUrl).pathname.slice(1))}`
      : `DATA_DIR ${resolve(target.dataDir)}`;
    const major = await withClient(connectionString, async (client) => {
      const found = await userRelations(client);
      if (found.n > 0) {
        throw new BackupRefused(
          `the ${into} is not empty (${found.n} tables, sequences or views, such as ${found.some.join(', ')}): ` +
            'a backup is restored only into an empty database. ' +
            (target.databaseUrl
              ? 'Create a new one (createdb, or CREATE DATABASE) and point DATABASE_URL at it.'
              : 'Point DATA_DIR at a new directory.'),
        );
      }
      return serverMajor(client);
    });
    const pgRestore = findPgTool('pg_restore', major);
    const { url, env } = libpq(connectionString);
    // The owner and grants of the backed-up server's roles are not carried over: every object
    // belongs to the user the service connects as here.
    const r = await runTool(
      pgRestore,
      ['--exit-on-error', '--single-transaction', '--no-owner', '--no-privileges', '--dbname', url, input],
      env,
    );
    if (r.code !== 0) {
      throw new BackupUnavailable(
        `pg_restore failed (exit ${r.code}), nothing was restored: ${r.output.trim().slice(-2000)}`,
      );
    }
    await withClient(connectionString, (client) => client.query('analyze'));
    return { file: input, into, seconds: round((performance.now() - started) / 1000) };
  } finally {
    await server?.stop();
  }
}

const round = (s: number) => Math.round(s * 100) / 100;
