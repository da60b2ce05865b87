import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The processes the benchmark loads: each in a child of its own, so the load generator (this
 * process) never shares an event loop with the server it measures.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface Running {
  url: string;
  pid: number;
  demo: { id: string; secret: string };
  /** Bearer token of /admin (the payment scenarios create and credit their own partners). */
  adminToken: string;
  stop(): Promise<void>;
}

/**
 * Where the measured service and the load generator run. With two CPUs or more, a benchmark that
 * calls {@link pinLoadGenerator} puts its services on CPU 0 (BENCH_SERVICE_CPUS) and itself on CPU 1
 * (BENCH_LOAD_CPUS), so neither takes the other's CPU; an empty value leaves that side unpinned.
 */
const pins = { service: '', load: '' };

/**
 * Pins this process (the load generator, every thread) and, from now on, the services it starts;
 * answers what it pinned, for the report.
 */
export function pinLoadGenerator(): string {
  const twoCpus = availableParallelism() >= 2;
  pins.service = process.env.BENCH_SERVICE_CPUS ?? (twoCpus ? '0' : '');
  pins.load = process.env.BENCH_LOAD_CPUS ?? (twoCpus ? '1' : '');
  if (pins.load)
    execFileSync('taskset', ['-a', '-p', '-c', pins.load, String(process.pid)], { stdio: 'ignore' });
  // A benchmark script this one starts (bench/issuance.ts under npm run bench) pins the same way:
  // pinned itself, it would see one CPU and pin nothing.
  process.env.BENCH_SERVICE_CPUS = pins.service;
  process.env.BENCH_LOAD_CPUS = pins.load;
  return `service on CPU ${pins.service || 'any'}, load generator on CPU ${pins.load || 'any'}`;
}

/** `command args` as spawned, under taskset when the services are pinned. */
const pinned = (command: string, args: string[]): [string, string[]] =>
  pins.service ? ['taskset', ['-c', pins.service, command, ...args]] : [command, args];

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
 * The baseline: a bare node:http server that reads the POST body and answers a fixed JSON of the
 * size of a get-offers reply. What the service reaches against it is the cost of everything else.
 */
const BARE_SERVER = `
const body = JSON.stringify({ offers: Array.from({ length: 4 }, (_, i) => ({
  product: 'rca', name: 'Asigurare RCA', company: 'company-' + i, duration: 365, price: 1234.56 + i,
  currency: 'MDL', min_start_date: '2026-11-22', max_interval: 90 })) });
require('node:http').createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body));
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
`;

export async function startBare(): Promise<Running> {
  const port = await freePort();
  const child = spawn(...pinned(process.execPath, ['-e', BARE_SERVER]), {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForOutput(child, /listening/, 10_000);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    demo: { id: '', secret: '' },
    adminToken: '',
    stop: () => stop(child),
  };
}

/** This process's environment without the database it names: a child gets its own. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  return env;
}

/**
 * What package.json's `start` script gives the service: its environment defaults
 * (`NAME=${NAME:-value}`) and the node flags before `src/main.ts`. The benchmark spawns node itself
 * (no npm in between, so the RSS sampled is the service's), and reads them here so that it runs the
 * service exactly as `npm start` does.
 */
export function startScript(root = ROOT): { env: Record<string, string>; nodeArgs: string[] } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const m = /^((?:\w+=\$\{\w+:-[^}]*\} )*)node (.*) src\/main\.ts$/.exec(pkg.scripts.start);
  if (!m)
    throw new Error(`package.json's start script is not "[NAME=\${NAME:-value} …] node <flags> src/main.ts"`);
  const env = Object.fromEntries([...m[1]!.matchAll(/(\w+)=\$\{\w+:-([^}]*)\}/g)].map((e) => [e[1]!, e[2]!]));
  return { env, nodeArgs: m[2]!.split(' ').filter(Boolean) };
}

/**
 * The service as `npm start` runs it ({@link startScript}: MALLOC_ARENA_MAX, the young generation's
 * cap), on the database `env` names. `nodeArgs` come after the start script's flags, so they add
 * to them or override them (BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the
 * service, the profile written on the graceful stop; "--max-semi-space-size=64" undoes the cap).
 */
export async function startPolita(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  /** Another checkout of the service to run (bench/ab.ts), with its own start script. */
  root = ROOT,
): Promise<Running> {
  const port = await freePort();
  const childEnv = inheritedEnv();
  const start = startScript(root);
  const child = spawn(...pinned(process.execPath, [...start.nodeArgs, ...nodeArgs, 'src/main.ts']), {
    cwd: root,
    // The rate limiter runs and counts as in production; the limit is above what the load sends
    // (a million a minute was not: three get-offers rows on one service sent more on a fast day,
    // and the last row's answers turned to 429s).
    env: {
      ...start.env,
      ...childEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // The load signs with the contract's X-Hmac-Signature, as the earlier runs did (decision 0084).
      DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const banner = await waitForOutput(child, /Demo secret:\s+([0-9a-f]+)/, 60_000);
  const secret = /Demo secret:\s+([0-9a-f]+)/.exec(banner)![1]!;
  const adminToken = /Admin token:\s+(\S+)/.exec(banner)?.[1] ?? '';
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    demo: { id: 'demo', secret },
    adminToken,
    stop: () => stop(child),
  };
}

/** Resolves with the output so far once it matches; the output keeps draining (unbuffered) afterwards. */
function waitForOutput(child: ChildProcess, re: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let matched = false;
    const onData = (d: Buffer) => {
      if (matched) return; // later log lines are dropped, not kept in memory
      out += d.toString();
      if (re.test(out)) {
        matched = true;
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => (matched ? process.stderr.write(d) : onData(d)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      if (!matched) {
        clearTimeout(timer);
        reject(new Error(`process exited (${code}) during start:\n${out}`));
      }
    });
  });
}

/** SIGTERM (graceful: a --cpu-prof profile is written), SIGKILL after 20 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/**
 * CPU time of each of a process's threads, ms, summed by thread name (Node names its main thread
 * MainThread, a worker thread WorkerThread, V8's helpers, GC among them, V8Worker), from schedstat:
 * the scheduler's own count, exact, where /proc's stat counts whole ticks and charges a tick to
 * whichever thread it interrupts.
 */
export function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName; // the process has exited
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      byName.set(name, (byName.get(name) ?? 0) + ns / 1e6);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return byName;
}

/** The machine's CPU ticks, idle (with I/O wait) and in all, from /proc/stat. */
export function machineCpu(): { idle: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) };
}

/** The share of the machine's CPU left idle between two {@link machineCpu} readings, %. */
export function idlePct(from: { idle: number; total: number }, to: { idle: number; total: number }): number {
  return (100 * (to.idle - from.idle)) / (to.total - from.total);
}

/**
 * The peak resident set (VmRSS) of a process, sampled every 500 ms until stopped. For the service
 * that is the node process itself (spawned with process.execPath, no npm in between); an embedded
 * PostgreSQL is a process of its own and is not counted.
 */
export function rssSampler(pid: number): { peakMb(): number; stop(): void } {
  let peak = 0;
  const sample = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // the process has exited
    }
  };
  sample();
  const timer = setInterval(sample, 500);
  return {
    peakMb: () => peak,
    stop: () => {
      sample();
      clearInterval(timer);
    },
  };
}

/**
 * A TypeScript script of this repository run to its end, as `npm run` runs it, on the database
 * `env` names (DATABASE_URL or DATA_DIR; neither is inherited). Its output is shown as it comes,
 * each line after `prefix`; answers its exit code and its stdout lines. Stopped (SIGTERM, then
 * SIGKILL 20 s later) after `timeoutMs`.
 */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  prefix: string,
  timeoutMs = 30 * 60_000,
): Promise<{ code: number | null; lines: string[] }> {
  const childEnv = inheritedEnv();
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', '--import', 'tsx', script, ...args],
    { cwd: ROOT, env: { ...childEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  const reader = (keep: boolean) => {
    let rest = '';
    const emit = (l: string) => {
      if (keep) lines.push(l);
      console.log(`${prefix}${l}`);
    };
    return {
      data(d: Buffer) {
        const parts = (rest + d.toString()).split('\n');
        rest = parts.pop()!;
        parts.forEach(emit);
      },
      end: () => rest && emit(rest),
    };
  };
  const out = reader(true);
  const err = reader(false);
  child.stdout.on('data', out.data);
  child.stderr.on('data', err.data);
  const timer = setTimeout(() => {
    console.log(`${prefix}stopped after ${timeoutMs / 1000} s`);
    void stop(child);
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  }).finally(() => clearTimeout(timer));
  out.end();
  err.end();
  return { code, lines };
}
