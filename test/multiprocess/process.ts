import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { testDatabaseUrl } from '../support/database.ts';
import { TEST_SECRET_KEY } from '../support/harness.ts';

/** DATA_DIRs made for children on a shared database (key and admin token only): removed after the file. */
const scratch: string[] = [];
afterAll(() => {
  for (const d of scratch.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratchDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'polita-proc-'));
  scratch.push(d);
  return d;
}

/** The repository root: every child runs `src/main.ts` from there, as `npm start` does. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const ADMIN_TOKEN = 'multiprocess-admin-token-0123456789';

export interface Creds {
  id: string;
  secret: string;
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  url: string;
  demo: Creds;
  /** Everything the child wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves when the child has exited, with its code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  call<T = Record<string, unknown>>(endpoint: string, body: unknown, creds?: Creds): Promise<Reply<T>>;
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Reply<T>>;
  /** SIGKILL unless it already exited; safe to call twice (afterAll). */
  kill(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it), so parallel test files never collide. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Spawns a real service process (`node src/main.ts`, the Node running vitest) and
 * returns once /healthz answers and the start banner printed the demo secret. The environment of
 * the test run is not inherited for DATABASE_URL/DATA_DIR: the caller says which database.
 */
export async function spawnService(
  env: { DATABASE_URL?: string; DATA_DIR?: string } & Record<string, string | undefined>,
  opts: { timeoutMs?: number; ownGroup?: boolean } = {},
): Promise<ServiceProcess> {
  const proc = startChild(await freePort(), env, opts.ownGroup ?? false);
  try {
    await proc.ready(opts.timeoutMs ?? 45_000);
  } catch (err) {
    await proc.handle.kill();
    throw err;
  }
  return proc.handle;
}

/** Spawns a child that is expected to fail at start: resolves with its exit code and output. */
export async function spawnExpectingFailure(
  env: Record<string, string | undefined>,
  timeoutMs = 45_000,
): Promise<{ code: number | null; output: string }> {
  const { handle } = startChild(await freePort(), env);
  const timer = setTimeout(() => void handle.kill(), timeoutMs);
  const { code } = await handle.exited;
  clearTimeout(timer);
  return { code, output: handle.output() };
}

function startChild(port: number, env: Record<string, string | undefined>, ownGroup = false) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.DATABASE_URL;
  delete childEnv.DATA_DIR;
  Object.assign(childEnv, {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ADMIN_TOKEN,
    SANDBOX_ASYNC_ISSUE_MS: '1000',
    ...env,
  });
  if (childEnv.DATABASE_URL && !childEnv.DATA_DIR) {
    // On a shared database the sandbox still keeps its key and admin token in a DATA_DIR: a fresh
    // one per child (not the repository's ./data), and one key for every child on the database.
    childEnv.DATA_DIR = scratchDir();
    childEnv.SECRET_KEY ??= TEST_SECRET_KEY;
  }
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawn(
    process.execPath,
    ['src/main.ts'],
    // ownGroup: a process group of its own, so a test can SIGKILL the whole group as a crash would.
    { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: ownGroup },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  const url = `http://127.0.0.1:${port}`;
  const demo: Creds = { id: 'demo', secret: '' };

  const request = async <T>(path: string, init: RequestInit): Promise<Reply<T>> => {
    const res = await fetch(url + path, init);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  };

  const handle: ServiceProcess = {
    child,
    port,
    url,
    demo,
    output: () => out,
    exited,
    call(endpoint, body, creds = demo) {
      const payload = typeof body === 'string' ? body : JSON.stringify(body);
      return request(`/v1/${endpoint}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, endpoint, payload),
        },
        body: payload,
      });
    },
    admin(method, path, body) {
      return request(path, {
        method,
        headers: {
          authorization: `Bearer ${env.ADMIN_TOKEN ?? ADMIN_TOKEN}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    },
    async kill() {
      if (!done && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };

  async function ready(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (done) throw new Error(`service exited during start:\n${out}`);
      const secret = /Demo secret:\s+([0-9a-f]+)/.exec(out)?.[1];
      if (secret) {
        try {
          const res = await fetch(`${url}/healthz`);
          if (res.ok) {
            demo.secret = secret;
            return;
          }
        } catch {
          /* not listening yet */
        }
      }
      await sleep(100);
    }
    throw new Error(`service did not become healthy within ${timeoutMs} ms:\n${out}`);
  }
  return { handle, ready };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value (not undefined) or the time is up. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await check();
    if (v !== undefined) return v;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A payment of `amount` MDL made now, unique by transaction and receipt. */
export function payment(amount: number, n: string = Math.random().toString(36).slice(2, 10)) {
  return { receipt_id: `RRN${n}`, transaction_id: `TX${n}`, paid_at: Date.now(), amount };
}

export const RCA_QUOTE = { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' };

/**
 * A fresh RCA draft: get-offers, then create-order from the first offer. By default for the demo
 * partner; `creds` makes it another partner's, `pick` takes offer `pick` (modulo the offers) instead.
 */
export async function rcaDraft(
  p: ServiceProcess,
  creds: Creds = p.demo,
  pick = 0,
): Promise<{ id: string; price: number }> {
  const q = await p.call<{ offers: { price: number; min_start_date: string; company: string }[] }>(
    'get-offers',
    RCA_QUOTE,
    creds,
  );
  if (q.status !== 200) throw new Error(`get-offers answered ${q.status}: ${JSON.stringify(q.body)}`);
  const offer = q.body.offers[pick % q.body.offers.length]!;
  const created = await p.call<{ id: string; price: number }>(
    'create-order',
    {
      customer: { phone: '+37369123456', name: 'Ion Popescu' },
      products: [
        {
          product: 'rca',
          vehicle: '100000001',
          start_date: offer.min_start_date,
          duration: 365,
          insurance_company: offer.company,
          idnx: '2003000000016',
        },
      ],
    },
    creds,
  );
  if (created.status !== 200)
    throw new Error(`create-order answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body;
}

/**
 * Inside a describe: two service processes started together on a fresh PostgreSQL database of
 * their own (migrations and the demo seed must cope with a twin starting at once), and a client on
 * that database; all stopped and dropped after the describe. Read the fields in the tests.
 */
export function twoServicesOnOneDatabase(): {
  a: ServiceProcess;
  b: ServiceProcess;
  client: pg.Client;
  url: string;
} {
  const env = {} as { a: ServiceProcess; b: ServiceProcess; client: pg.Client; url: string };
  let db: Awaited<ReturnType<typeof testDatabaseUrl>> | undefined;
  beforeAll(async () => {
    db = await testDatabaseUrl();
    env.url = db.url;
    [env.a, env.b] = await Promise.all([
      spawnService({ DATABASE_URL: db.url }),
      spawnService({ DATABASE_URL: db.url }),
    ]);
    env.client = new pg.Client({ connectionString: db.url });
    await env.client.connect();
  }, 60_000);
  afterAll(async () => {
    await Promise.all([env.a?.kill(), env.b?.kill()]);
    await env.client?.end();
    await db?.drop();
  }, 60_000);
  return env;
}

/** Pids of the postgres processes serving the cluster of DATA_DIR `dir`: its postmaster, then its children. */
export function postgresProcessesOn(dir: string): number[] {
  const cluster = join(dir, 'pg');
  const postmasters: number[] = [];
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('/postgres') && args.includes(cluster)) postmasters.push(Number(entry));
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const children = [...parents].filter(([, ppid]) => postmasters.includes(ppid)).map(([pid]) => pid);
  return [...postmasters, ...children];
}

/** `npm run reconcile` as a child process, on the database `env` names: exit code and output. */
export function runReconcile(
  env: { DATABASE_URL: string } | { DATA_DIR: string },
): Promise<{ code: number | null; output: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!('DATABASE_URL' in env)) delete childEnv.DATABASE_URL;
  if (!('DATA_DIR' in env)) {
    childEnv.DATA_DIR = scratchDir();
    childEnv.SECRET_KEY ??= TEST_SECRET_KEY;
  }
  const child = spawn(process.execPath, ['src/cli/reconcile.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** After a test that killed services: no server of `dir` outlives it (SIGKILL, then its directory goes). */
export async function removeDataDir(dir: string): Promise<void> {
  for (const pid of postgresProcessesOn(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (let i = 0; i < 50 && postgresProcessesOn(dir).length > 0; i++) await sleep(100);
  rmSync(dir, { recursive: true, force: true });
}
