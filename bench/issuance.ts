import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signatureHeader } from '../src/signature.ts';
import {
  idlePct,
  machineCpu,
  pinLoadGenerator,
  rssSampler,
  startPolita,
  threadCpu,
  type Running,
} from './processes.ts';

/**
 * `npm run bench:issuance`: issuance end to end, paid → policy PDF → webhook delivered, against the
 * service in a process of its own (as `npm start` runs it), its webhooks received by a server in
 * this process on 127.0.0.1. On the embedded PostgreSQL in a fresh DATA_DIR, or on DATABASE_URL.
 *
 * 1. Burst: BENCH_ORDERS (default 4 000) RCA orders are created and paid from the wallet on a
 *    WORKERS=false instance; then an instance with workers starts on the same database and the clock
 *    runs until every order's `completed` webhook has arrived. The drain rate is taken between the
 *    first and the last webhook (start-up excluded), the sustained rate over the middle 80 %.
 * 2. Steady: on that instance, orders paid at BENCH_ISSUANCE_RATE (default 100) a second for
 *    BENCH_ISSUANCE_SECONDS (default 20); for each, the time from the pay reply to its webhook.
 *
 * Prints, last, `RESULT {json}` for `npm run bench`. The service's RSS is sampled every 500 ms.
 * BENCH_NODE_ARGS adds node flags to the instance with workers (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
 * The services run on CPU 0 and this process on CPU 1, as the other benchmarks pin them.
 */
console.log(pinLoadGenerator());
const ORDERS = Number(process.env.BENCH_ORDERS || 4000);
const RATE = Number(process.env.BENCH_ISSUANCE_RATE || 100);
const STEADY_SECONDS = Number(process.env.BENCH_ISSUANCE_SECONDS || 20);
const CONCURRENCY = 50;

export interface IssuanceResult {
  burstOrders: number;
  /** Orders a second from the first webhook of the burst to the last. */
  burstDrainPerSec: number;
  /** Orders a second between the 10th and the 90th percentile of the burst's arrivals. */
  sustainedPerSec: number;
  steadyRatePerSec: number;
  p50PaidToCompletedMs: number;
  p99PaidToCompletedMs: number;
  rssPeakMb: number;
}

/** Receives the webhooks: for each order, when its `completed` event arrived. */
function receiver(): Promise<{ server: Server; url: string; arrived: Map<string, number> }> {
  const arrived = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { orderId: string; status: string };
      if (body.status === 'completed' && !arrived.has(body.orderId)) arrived.set(body.orderId, at);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}/hooks`, arrived });
    }),
  );
}

async function admin(target: Running, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
}

async function call<T>(target: Running, endpoint: string, body: unknown): Promise<T> {
  const payload = JSON.stringify(body);
  const res = await fetch(`${target.url}/v1/${endpoint}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hmac-signature': signatureHeader(target.demo.id, target.demo.secret, payload),
    },
    body: payload,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${endpoint} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Creates and pays one RCA order from the demo wallet; resolves when the payment is answered. */
async function buyOne(target: Running, startDate: string, company: string, n: number): Promise<string> {
  const order = await call<{ id: string }>(target, 'create-order', {
    customer: { phone: `+3736${String(1_000_000 + (n % 1_000_000)).slice(1)}`, name: `Bench ${n}` },
    products: [
      {
        product: 'rca',
        vehicle: '100000001',
        start_date: startDate,
        duration: 365,
        insurance_company: company,
        idnx: '2003000000016',
      },
    ],
  });
  await call(target, 'pay-order-from-balance', { id: order.id });
  return order.id;
}

/**
 * CPU seconds (user + system) the service (all its threads) and the PostgreSQL server have used so
 * far: the postmaster whose command line names `dataDir` (the system server's for DATABASE_URL,
 * which other clients may share), its children, and its children already reaped.
 */
function cpuSeconds(servicePid: number, dataDir: string): { service: number; postgres: number } {
  const stat = (pid: string | number) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    } catch {
      return undefined;
    }
  };
  const seconds = (f: string[] | undefined, from = 11) =>
    f ? (Number(f[from]) + Number(f[from + 1])) / 100 : 0;
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const cmdline = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  };
  const marker = process.env.DATABASE_URL ? '/var/lib/postgresql' : dataDir;
  const postmaster = pids.find((pid) => /postgres/.test(cmdline(pid)) && cmdline(pid).includes(marker));
  let postgres = 0;
  if (postmaster) {
    const own = stat(postmaster);
    postgres = seconds(own) + seconds(own, 13);
    for (const pid of pids) {
      const f = stat(pid);
      if (f?.[1] === postmaster) postgres += seconds(f);
    }
  }
  return { service: seconds(stat(servicePid)), postgres };
}

/** The service's memory as its /metrics tells it (the main thread's V8 heap) beside its RSS. */
async function memory(target: Running): Promise<string> {
  const res = await fetch(`${target.url}/metrics`, {
    headers: { authorization: `Bearer ${target.adminToken}` },
  });
  const text = await res.text();
  const mb = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? `${(Number(m[1]) / 1048576).toFixed(0)} MB` : '?';
  };
  return (
    `RSS ${mb('process_resident_memory_bytes')}, main heap ${mb('nodejs_heap_size_used_bytes')} used of ` +
    `${mb('nodejs_heap_size_total_bytes')}, external ${mb('nodejs_external_memory_bytes')}`
  );
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]! : Number.NaN;

async function waitFor(cond: () => boolean, timeoutMs: number, progress?: () => void): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
    progress?.();
  }
  return true;
}

export async function measureIssuance(): Promise<IssuanceResult> {
  const dir = mkdtempSync(join(tmpdir(), 'polita-issuance-'));
  const env: Record<string, string> = {
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  };
  const hooks = await receiver();
  let service: Running | undefined;
  try {
    // 1. A backlog: orders paid with the workers off.
    service = await startPolita({ ...env, WORKERS: 'false' });
    await admin(service, 'PATCH', '/admin/partners/demo', { webhook_url: hooks.url });
    // 100 million MDL, in credits of at most 10 million each (decision 0048).
    for (let i = 0; i < 10; i++) {
      await admin(service, 'POST', '/admin/partners/demo/wallet/credits', {
        wallet: 'online',
        amount: 10_000_000,
        reference: `bench-issuance-${i}`,
      });
    }
    const quote = await call<{ offers: { min_start_date: string; company: string }[] }>(
      service,
      'get-offers',
      {
        product: 'rca',
        vehicle: '100000001',
        duration: 365,
        idnx: '2003000000016',
      },
    );
    const { min_start_date: startDate, company } = quote.offers[0]!;
    const paidAt = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ORDERS) await buyOne(service!, startDate, company, next++);
      }),
    );
    console.log(
      `${ORDERS} orders paid in ${((performance.now() - paidAt) / 1000).toFixed(1)} s, workers off`,
    );
    await service.stop();

    // 2. An instance with workers drains it.
    const startedAt = performance.now();
    service = await startPolita(env, (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean));
    const rss = rssSampler(service.pid);
    console.log(`service with workers ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
    const cpu0 = cpuSeconds(service.pid, dir);
    const threads0 = threadCpu(service.pid);
    const machine0 = machineCpu();
    let shown = 0;
    const drained = await waitFor(
      () => hooks.arrived.size >= ORDERS,
      600_000,
      () => {
        if (performance.now() - shown < 1000) return;
        shown = performance.now();
        console.log(`  ${hooks.arrived.size} webhooks received`);
      },
    );
    if (!drained) throw new Error(`only ${hooks.arrived.size} of ${ORDERS} webhooks arrived in 10 minutes`);
    const times = [...hooks.arrived.values()].sort((a, b) => a - b);
    const burstDrainPerSec = (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
    const lo = Math.floor(times.length * 0.1);
    const hi = Math.floor(times.length * 0.9);
    const sustainedPerSec = (hi - lo) / ((times[hi]! - times[lo]!) / 1000);
    const cpu1 = cpuSeconds(service.pid, dir);
    const threads1 = threadCpu(service.pid);
    const idle = idlePct(machine0, machineCpu());
    // ms an order of the service's threads by name: its event loop, the PDF threads, V8's helpers (GC).
    // '—' where the kernel shows no schedstat (or no such thread), rather than a 0 that reads as free.
    const perOrder = (name: string) =>
      threads1.has(name)
        ? (((threads1.get(name) ?? 0) - (threads0.get(name) ?? 0)) / ORDERS).toFixed(1)
        : '—';
    console.log(`  at the end of the burst: ${await memory(service)}`);
    console.log(
      `burst: ${ORDERS} orders issued and delivered at ${burstDrainPerSec.toFixed(0)}/s ` +
        `(${sustainedPerSec.toFixed(0)}/s over the middle 80 %); CPU an order: service ` +
        `${((1000 * (cpu1.service - cpu0.service)) / ORDERS).toFixed(1)} ms (event loop ` +
        `${perOrder('MainThread')}, PDF threads ${perOrder('WorkerThread')}, V8's helper threads ` +
        `${perOrder('V8Worker')}), PostgreSQL ` +
        `${((1000 * (cpu1.postgres - cpu0.postgres)) / ORDERS).toFixed(1)} ms` +
        (process.env.DATABASE_URL ? ' (every process of the server)' : '') +
        `; the machine ${idle.toFixed(0)} % idle`,
    );

    // 3. Orders paid at a steady rate while the workers run.
    hooks.arrived.clear();
    const paid = new Map<string, number>();
    const total = RATE * STEADY_SECONDS;
    const t0 = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(
        buyOne(service, startDate, company, ORDERS + i).then((id) => void paid.set(id, performance.now())),
      );
    }
    await Promise.all(inFlight);
    const offered = total / ((performance.now() - t0) / 1000);
    await waitFor(() => hooks.arrived.size >= total, 120_000);
    const latencies = [...paid].map(([id, at]) => (hooks.arrived.get(id) ?? Number.POSITIVE_INFINITY) - at);
    latencies.sort((a, b) => a - b);
    rss.stop();
    const result: IssuanceResult = {
      burstOrders: ORDERS,
      burstDrainPerSec,
      sustainedPerSec,
      steadyRatePerSec: offered,
      p50PaidToCompletedMs: quantile(latencies, 0.5),
      p99PaidToCompletedMs: quantile(latencies, 0.99),
      rssPeakMb: rss.peakMb(),
    };
    console.log(
      `steady: ${total} orders paid at ${offered.toFixed(0)}/s; pay reply → webhook received ` +
        `p50 ${result.p50PaidToCompletedMs.toFixed(0)} ms, p99 ${result.p99PaidToCompletedMs.toFixed(0)} ms; ` +
        `service RSS peak ${result.rssPeakMb.toFixed(0)} MB`,
    );
    return result;
  } finally {
    await service?.stop();
    hooks.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  measureIssuance().then(
    (r) => console.log(`RESULT ${JSON.stringify(r)}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
