/**
 * What one request costs, in CPU: `npm run bench:cost [-- bare]`. Starts the service as the
 * benchmark does, on a fresh embedded DATA_DIR (or on DATABASE_URL's database, as it is), warms it
 * up as the benchmark's get-offers rows do, then runs get-offers rca at 50 connections for
 * BENCH_SECONDS (default 6) and prints one JSON line: req/s, p99, the service's user and kernel
 * CPU a request (its process, every thread, from /proc), the load generator's (this process), the
 * machine's idle share over the window, each of the service's threads' CPU a request (threadUs, by
 * thread name) and how much of the window its main thread was on a CPU (mainThreadBusyPct: near
 * 100, the event loop is what limits it). `bare` measures bare node:http the same way. AB_PATH and
 * AB_BODY, as bench:ab takes them, measure another signed POST; AB_PATH=/v1/get-order without
 * AB_BODY seeds 10 000 orders first and asks for random demo ones, as the benchmark's get-order row
 * does. BENCH_NODE_ARGS adds node flags to the service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 * and BENCH_ROOT runs another checkout's service (a worktree with its own node_modules) the same way.
 *
 * The benchmark's ratio says how far get-offers is from bare node:http; this says where the time
 * went, in the service and in the load generator. Pinned as bench:ab pins (the service on CPU 0,
 * the generator on CPU 1, with two CPUs or more).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedConnectionString } from '../src/db/embedded-server.ts';
import { idlePct, machineCpu, pinLoadGenerator, startBare, startPolita, threadCpu } from './processes.ts';
import { quantile, signedLoad, warmUp, type Body } from './scenarios.ts';
import { getOrderBodies, ORDERS_SMALL } from './get-order.ts';

const TICK_US = 1e6 / 100; // USER_HZ: /proc counts CPU time in hundredths of a second

function processCpu(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

const pinning = pinLoadGenerator();
const bare = process.argv[2] === 'bare';
const PATH = process.env.AB_PATH || '/v1/get-offers';
const BODY = process.env.AB_BODY
  ? (JSON.parse(process.env.AB_BODY) as Body)
  : PATH === '/v1/get-order'
    ? undefined
    : { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' };
const seconds = Number(process.env.BENCH_SECONDS ?? 6);
const dataDir = bare || process.env.DATABASE_URL ? undefined : mkdtempSync(join(tmpdir(), 'polita-cost-'));
const removeDataDir = () => dataDir && rmSync(dataDir, { recursive: true, force: true });
const target = await (
  bare
    ? startBare()
    : startPolita(
        dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: process.env.DATABASE_URL! },
        (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean),
        process.env.BENCH_ROOT || undefined,
      )
).catch((err: unknown) => {
  removeDataDir();
  throw err;
});
try {
  const database: { env: Record<string, string>; url: string } = dataDir
    ? { env: { DATA_DIR: dataDir }, url: embeddedConnectionString(dataDir) }
    : { env: { DATABASE_URL: process.env.DATABASE_URL! }, url: process.env.DATABASE_URL! };
  const load = signedLoad(target, PATH, BODY ?? (await getOrderBodies(target, database, ORDERS_SMALL)), 50);
  await warmUp(load);
  const service0 = processCpu(target.pid);
  const threads0 = threadCpu(target.pid);
  const machine0 = machineCpu();
  const generator0 = process.cpuUsage();
  const r = await load(seconds);
  const service1 = processCpu(target.pid);
  const threads1 = threadCpu(target.pid);
  const machine1 = machineCpu();
  const generator = process.cpuUsage(generator0);
  const n = r.requests.total;
  const round = (x: number) => Math.round(x * 10) / 10;
  console.log(
    JSON.stringify({
      server: bare ? 'bare node:http' : 'polita',
      ...(bare ? {} : { path: PATH }),
      pinning,
      reqPerSec: Math.round(n / r.duration),
      p99Ms: round(quantile(r.latencies, 0.99)),
      serviceUserUs: round(((service1.user - service0.user) * TICK_US) / n),
      serviceKernelUs: round(((service1.system - service0.system) * TICK_US) / n),
      generatorUserUs: round(generator.user / n),
      generatorKernelUs: round(generator.system / n),
      idlePct: round(idlePct(machine0, machine1)),
      mainThreadBusyPct: round(
        (100 * ((threads1.get('MainThread') ?? 0) - (threads0.get('MainThread') ?? 0))) / (r.duration * 1000),
      ),
      threadUs: Object.fromEntries(
        [...threads1]
          .map(([name, ms]) => [name, round(((ms - (threads0.get(name) ?? 0)) * 1000) / n)] as const)
          .filter(([, us]) => us > 0),
      ),
    }),
  );
} finally {
  await target.stop();
  removeDataDir();
}
