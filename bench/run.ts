import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { embeddedConnectionString } from '../src/db/embedded-server.ts';
import {
  withWalletTx,
  PGBENCH_SCALE,
  PGBENCH_SCALE_WIDE,
  pgbenchTpcb,
  settle,
  withDatabase,
  type Anchor,
} from './anchors.ts';
import {
  pinLoadGenerator,
  rssSampler,
  runScript,
  startBare,
  startPolita,
  type Running,
} from './processes.ts';
import { SCENARIOS } from './table.ts';
import { fmt, offers, type Anchors, type Measured, type Scenario, type Verdict } from './scenarios.ts';

/**
 * `npm run bench`: the table of decision 0022's targets. The bare node:http baseline, then, on each
 * engine (the service's embedded PostgreSQL in a fresh DATA_DIR, and a fresh database of the server at
 * BENCH_PG when it answers), every scenario of bench/table.ts with the anchors it is judged against,
 * measured on the same server in the same run (pgbench TPC-B, a bare wallet transaction); get-order
 * with 10 k and 1 M orders on a service of its own; the issuance benchmark (bench/issuance.ts); and
 * the peak RSS of the service's node process. Prints one table and keeps it in bench/RESULTS.md.
 *
 * BENCH_SECONDS (default 10) per scenario and anchor; BENCH_ENGINES=embedded,postgres to pick
 * engines; BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres) the server to make
 * databases on; BENCH_NODE_ARGS extra node flags for the service (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof"); BENCH_ONLY=<text>[,<text>…] runs only the scenarios whose name
 * contains one of them ("issuance" names the issuance benchmark); BENCH_ORDERS_LARGE (default
 * 1 000 000) get-order's large database; BENCH_PGBENCH_SCALE (default 1, pgbench's own) the
 * scale create + confirm is judged at (it is shown against scale 50 as well). With two CPUs or more
 * the services (and an embedded server, their child) run on CPU 0 and the load on CPU 1, as
 * bench:ab pins them (BENCH_SERVICE_CPUS, BENCH_LOAD_CPUS); the PostgreSQL server at BENCH_PG is not pinned.
 */
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
console.log(pinLoadGenerator());
const CONNECTIONS = 50;
const PG_SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const ENGINES = (process.env.BENCH_ENGINES || 'embedded,postgres').split(',');
const NODE_ARGS = (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean);
const ONLY = (process.env.BENCH_ONLY || '').split(',');
const chosen = (name: string) => ONLY.some((o) => name.includes(o));
/** The service's RSS target, MB. */
const RSS_TARGET_MB = 400;

/** A line of the table, every cell as printed. */
interface Row {
  scenario: string;
  engine: string;
  rate: string;
  p50: string;
  p99: string;
  anchor: string;
  ratio: string;
  target: string;
  met: string;
  errors: string;
}

const NONE: Verdict = { anchor: '—', ratio: '—', target: '—', met: undefined };
const ms = (n: number) => fmt(n, 1);
const yesNo = (met: boolean | undefined) => (met === undefined ? '—' : met ? 'yes' : 'no');

function measuredRow(scenario: string, engine: string, m: Measured, v: Verdict): Row {
  return {
    scenario,
    engine,
    rate: `${fmt(m.rate)} ${m.unit}`,
    p50: ms(m.p50Ms),
    p99: ms(m.p99Ms),
    anchor: v.anchor,
    ratio: v.ratio,
    target: v.target,
    met: yesNo(v.met),
    errors: String(m.errors),
  };
}

function anchorRow(a: Anchor, engine: string): Row {
  return {
    ...NONE,
    scenario: `anchor: ${a.name}, ${CONNECTIONS} connections, no service`,
    engine,
    rate: `${fmt(a.rate)} ${a.unit}`,
    p50: ms(a.p50Ms),
    p99: ms(a.p99Ms),
    met: '—',
    errors: String(a.errors),
  };
}

function notMeasured(scenario: string, engine: string, reason: string, target = '—'): Row {
  const why = reason.split('\n')[0]!.slice(0, 160).replaceAll('|', '/');
  return {
    ...NONE,
    scenario,
    engine,
    rate: `not measured: ${why}`,
    p50: '—',
    p99: '—',
    target,
    met: 'no',
    errors: '—',
  };
}

/** One database to run a service on: the environment that names it, its URL, its server's. */
interface Instance {
  env: Record<string, string>;
  databaseUrl: string;
  /** A maintenance database of the same server (for the embedded one: only while a service runs). */
  serverUrl: string;
  cleanup(): Promise<void>;
}

interface Engine {
  name: 'embedded' | 'postgres';
  fresh(): Promise<Instance>;
}

async function engines(): Promise<Engine[]> {
  const list: Engine[] = [];
  if (ENGINES.includes('embedded')) {
    list.push({
      name: 'embedded',
      // The default deployment: the service starts its own PostgreSQL in DATA_DIR. pgbench and the
      // bare transaction reach that server through its Unix socket, while the service runs it.
      async fresh() {
        const dir = mkdtempSync(join(tmpdir(), 'polita-bench-'));
        return {
          env: { DATA_DIR: dir },
          databaseUrl: embeddedConnectionString(dir),
          serverUrl: embeddedConnectionString(dir, 'postgres'),
          cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    });
  }
  if (ENGINES.includes('postgres')) {
    const admin = new pg.Client({ connectionString: PG_SERVER, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
      list.push({ name: 'postgres', fresh: freshPostgres });
    } catch (err) {
      console.log(`PostgreSQL at ${PG_SERVER} not available (${(err as Error).message}): skipped`);
    } finally {
      await admin.end().catch(() => {});
    }
  }
  return list;
}

async function freshPostgres(): Promise<Instance> {
  const name = `polita_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: PG_SERVER });
    await c.connect();
    await c.query(statement).finally(() => c.end());
  };
  await admin(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'polita-bench-pg-'));
  const url = withDatabase(PG_SERVER, name);
  return {
    // Its DATA_DIR holds only the sandbox's secret key and admin token, not the repository's ./data.
    env: { DATABASE_URL: url, DATA_DIR: dataDir },
    databaseUrl: url,
    serverUrl: PG_SERVER,
    async cleanup() {
      await admin(`drop database if exists ${name} with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Everything measured on one engine, in order. */
async function measureEngine(engine: Engine, bare: Running): Promise<Row[]> {
  const rows: Row[] = [];
  const anchors: Anchors = {};
  const failed = new Set<keyof Anchors>();
  let rssPeak = 0;
  const emit = (row: Row) => {
    rows.push(row);
    console.log(line(row));
  };

  const measureAnchors = async (scenario: Scenario, instance: Instance) => {
    for (const key of scenario.anchors ?? []) {
      if (anchors[key] || failed.has(key)) continue;
      const measure = {
        pgbench: () => pgbenchTpcb(instance.serverUrl, SECONDS, CONNECTIONS, PGBENCH_SCALE),
        // The same run as the judged anchor when that is at this scale already: not measured twice.
        pgbenchWide: () =>
          PGBENCH_SCALE === PGBENCH_SCALE_WIDE && anchors.pgbench
            ? Promise.resolve(anchors.pgbench)
            : pgbenchTpcb(instance.serverUrl, SECONDS, CONNECTIONS, PGBENCH_SCALE_WIDE),
      }[key];
      try {
        const measured = await measure();
        const shown = Object.values(anchors).includes(measured);
        anchors[key] = measured;
        if (!shown) emit(anchorRow(measured, engine.name));
      } catch (err) {
        failed.add(key);
        emit(notMeasured(`anchor ${key}`, engine.name, (err as Error).message));
      }
    }
  };

  /** A service on `instance`, its RSS sampled, running `scenarios` in turn. */
  const withService = async (instance: Instance, workers: boolean, scenarios: Scenario[]) => {
    const service = await startPolita(
      workers ? instance.env : { ...instance.env, WORKERS: 'false' },
      NODE_ARGS,
    );
    const rss = rssSampler(service.pid);
    try {
      for (const scenario of scenarios) {
        const name = `${scenario.name}${workers ? '' : ' (WORKERS=false)'}`;
        try {
          await measureAnchors(scenario, instance);
          const measured = await scenario.run(service, {
            seconds: SECONDS,
            connections: CONNECTIONS,
            bare,
            database: { env: instance.env, url: instance.databaseUrl },
            settle: () => settle(instance.databaseUrl),
            walletTx: (wallets, use) =>
              withWalletTx(instance.serverUrl, { connections: CONNECTIONS, wallets, seconds: SECONDS }, use),
            sibling: async () => {
              const own = await engine.fresh();
              try {
                const sibling = await startPolita({ ...own.env, WORKERS: 'false' }, NODE_ARGS);
                const siblingRss = rssSampler(sibling.pid);
                return {
                  service: sibling,
                  database: { env: own.env, url: own.databaseUrl },
                  settle: () => settle(own.databaseUrl),
                  stop: async () => {
                    siblingRss.stop();
                    rssPeak = Math.max(rssPeak, siblingRss.peakMb());
                    await sibling.stop();
                    await own.cleanup();
                  },
                };
              } catch (err) {
                await own.cleanup();
                throw err;
              }
            },
          });
          for (const m of [measured].flat()) {
            const verdict = m.verdict ?? scenario.judge?.(m, anchors) ?? NONE;
            emit(measuredRow(`${name}${m.label ?? ''}`, engine.name, m, verdict));
          }
        } catch (err) {
          emit(notMeasured(name, engine.name, (err as Error).message));
        }
      }
    } finally {
      rss.stop();
      rssPeak = Math.max(rssPeak, rss.peakMb());
      await service.stop();
    }
  };

  const scenarios = SCENARIOS.filter((s) => chosen(s.name));
  const instance = await engine.fresh();
  try {
    // One service per mode, one after the other: a DATA_DIR takes a single process.
    for (const workers of [true, false]) {
      const group = scenarios.filter((s) => !s.ownDatabase && (s.workers ?? true) === workers);
      if (group.length > 0) await withService(instance, workers, group);
    }
  } finally {
    await instance.cleanup();
  }
  for (const scenario of scenarios.filter((s) => s.ownDatabase)) {
    const own = await engine.fresh();
    try {
      await withService(own, scenario.workers ?? true, [scenario]);
    } finally {
      await own.cleanup();
    }
  }

  let issuanceRss: number | undefined;
  if (chosen('issuance')) {
    const result = await issuance(engine);
    if (typeof result === 'string') {
      emit(notMeasured('issuance', engine.name, result, '≥ 200 orders/s; p99 ≤ 2 000 ms'));
    } else {
      issuanceRows(result, engine.name).forEach(emit);
      issuanceRss = result.rssPeakMb;
    }
  }

  if (rssPeak > 0 || issuanceRss !== undefined) {
    const peak = Math.max(rssPeak, issuanceRss ?? 0);
    emit({
      ...NONE,
      scenario: 'RSS peak of the service (its node process, every 500 ms)',
      engine: engine.name,
      rate: `${fmt(peak)} MB`,
      p50: '—',
      p99: '—',
      anchor:
        `scenarios' services ${rssPeak > 0 ? `${fmt(rssPeak)} MB` : 'not run'}` +
        (issuanceRss !== undefined ? `; issuance's ${fmt(issuanceRss)} MB` : ''),
      target: `≤ ${RSS_TARGET_MB} MB`,
      met: yesNo(peak <= RSS_TARGET_MB),
      errors: '—',
    });
  }
  return rows;
}

/** What bench/issuance.ts prints last, after `RESULT `. */
interface IssuanceResult {
  sustainedPerSec: number;
  burstOrders: number;
  burstDrainPerSec: number;
  steadyRatePerSec: number;
  p50PaidToCompletedMs: number;
  p99PaidToCompletedMs: number;
  rssPeakMb: number;
}

const ISSUANCE_TIMEOUT_MS = Number(process.env.BENCH_ISSUANCE_TIMEOUT_SECONDS || 1200) * 1000;
/** Another script with the same contract (a stub, to try the wiring). */
const ISSUANCE_SCRIPT = process.env.BENCH_ISSUANCE_SCRIPT || 'bench/issuance.ts';

/**
 * bench/issuance.ts on this engine: on PostgreSQL with DATABASE_URL a fresh database of BENCH_PG;
 * embedded without it (the script makes its own DATA_DIR). Answers its result, or why there is none.
 */
async function issuance(engine: Engine): Promise<IssuanceResult | string> {
  const instance = engine.name === 'postgres' ? await freshPostgres() : undefined;
  try {
    const env: Record<string, string> = instance ? { DATABASE_URL: instance.databaseUrl } : {};
    const run = await runScript(ISSUANCE_SCRIPT, [], env, '  issuance: ', ISSUANCE_TIMEOUT_MS);
    const last = run.lines.filter((l) => l.trim()).at(-1) ?? '';
    if (!last.startsWith('RESULT ')) {
      return `${ISSUANCE_SCRIPT} ${run.code === 0 ? 'printed no RESULT line' : `exited ${run.code ?? 'on a signal'}`}`;
    }
    const parsed = JSON.parse(last.slice('RESULT '.length)) as Record<keyof IssuanceResult, unknown>;
    // A figure the script could not take (JSON has no Infinity: null) is shown as —.
    const num = (v: unknown) => (typeof v === 'number' ? v : Number.NaN);
    return {
      sustainedPerSec: num(parsed.sustainedPerSec),
      burstOrders: num(parsed.burstOrders),
      burstDrainPerSec: num(parsed.burstDrainPerSec),
      steadyRatePerSec: num(parsed.steadyRatePerSec),
      p50PaidToCompletedMs: num(parsed.p50PaidToCompletedMs),
      p99PaidToCompletedMs: num(parsed.p99PaidToCompletedMs),
      rssPeakMb: num(parsed.rssPeakMb),
    };
  } catch (err) {
    return (err as Error).message;
  } finally {
    await instance?.cleanup();
  }
}

function issuanceRows(r: IssuanceResult, engine: string): Row[] {
  const rate = (n: number) => `${fmt(n)} orders/s`;
  const row = (scenario: string, cells: Partial<Row>): Row => ({
    ...NONE,
    scenario,
    engine,
    rate: '—',
    p50: '—',
    p99: '—',
    met: '—',
    errors: '—',
    ...cells,
  });
  return [
    row(`issuance, burst of ${fmt(r.burstOrders)} paid orders drained (first → last webhook)`, {
      rate: rate(r.burstDrainPerSec),
      target: '≥ 200 orders/s',
      met: yesNo(r.burstDrainPerSec >= 200),
    }),
    row('issuance, sustained (middle 80 % of the burst)', {
      rate: rate(r.sustainedPerSec),
      target: '≥ 200 orders/s',
      met: yesNo(r.sustainedPerSec >= 200),
    }),
    row(`issuance at ${fmt(r.steadyRatePerSec)} orders/s, paid → completed (webhook received)`, {
      rate: rate(r.steadyRatePerSec),
      p50: fmt(r.p50PaidToCompletedMs),
      p99: fmt(r.p99PaidToCompletedMs),
      target: 'p99 ≤ 2 000 ms at 100 orders/s',
      met: yesNo(r.p99PaidToCompletedMs <= 2000),
    }),
  ];
}

async function main(): Promise<void> {
  // Other work on the machine moves every figure: the load average is recorded with the results.
  const loadAtStart = loadavg()[0]!.toFixed(2);
  console.log(
    `Polita benchmark: ${CONNECTIONS} connections, ${SECONDS} s a scenario (load ${loadAtStart})\n`,
  );

  // The bare server answers anything: its fixed offers reply is the ceiling of get-offers. It runs
  // for the whole benchmark. Each get-offers scenario is bracketed by two bare windows and takes its
  // share against them (on a shared 2-CPU machine one bare run alone swung between 57 000 and
  // 72 000 req/s, and on another day between 23 000 and 33 000); it is also measured before and
  // after all the scenarios, for the record.
  const bare = await startBare();
  const measureBare = async () => {
    const m = await offers('bare node:http', {}).run(bare, {
      seconds: SECONDS,
      connections: CONNECTIONS,
      database: { env: {}, url: '' },
      settle: async () => {},
      sibling: () => Promise.reject(new Error('the bare server has no database')),
    });
    return [m].flat()[0]!;
  };
  const bareBefore = await measureBare();
  console.log(`bare node:http before: ${fmt(bareBefore.rate)} req/s, p99 ${ms(bareBefore.p99Ms)} ms`);

  const rows: Row[] = [];
  for (const engine of await engines()) rows.push(...(await measureEngine(engine, bare)));

  const bareAfter = await measureBare();
  await bare.stop();
  const bareRow = (when: string, m: Measured) =>
    measuredRow(`bare node:http (fixed JSON), ${when}`, '-', m, NONE);
  rows.unshift(bareRow('before the scenarios', bareBefore), bareRow('after', bareAfter));

  const table = render(rows);
  console.log(`\n${table}`);
  const machine = `${cpus().length} CPUs (nproc ${nproc()}), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
  const command = [
    `BENCH_SECONDS=${SECONDS}`,
    ...['BENCH_ENGINES', 'BENCH_ONLY', 'BENCH_ORDERS_LARGE']
      .filter((k) => process.env[k])
      .map((k) => `${k}=${/\s/.test(process.env[k]!) ? `'${process.env[k]}'` : process.env[k]}`),
    'npm run bench',
  ].join(' ');
  writeFileSync(
    new URL('./RESULTS.md', import.meta.url),
    `# Benchmark results (last run)\n\n` +
      `- Date: ${new Date().toISOString()}\n- Machine: ${machine}\n` +
      `- Load average (1 min) at start / end: ${loadAtStart} / ${loadavg()[0]!.toFixed(2)}\n` +
      `- Command: \`${command}\` (${CONNECTIONS} connections; load generator and ` +
      `each server in separate processes)\n` +
      `- Targets (docs/decisions/0022-performance-targets.md; ratios taken side by side in one run, ` +
      `on PostgreSQL and on the embedded default): issuance ≥ 200 completed orders/s sustained, ` +
      `a burst's backlog drained at full speed, ` +
      `p99 paid → completed ≤ 2 s at 100 orders/s; create + confirm pairs/s ≥ 40 % of pgbench TPC-B ` +
      `tps on the same server with the same connections; pay-from-balance over 50 partners ≥ 60 % of a ` +
      `bare wallet-payment transaction; one hot wallet at 50 connections p99 < 100 ms; get-offers ≥ 50 % ` +
      `of bare node:http with p99 ≤ 10 ms; get-order p99 with 1 M orders ≤ 1.2× its p99 with 10 k; ` +
      `RSS of the service ≤ 400 MB\n\n` +
      `${table}\n\n${NOTES}\n`,
  );
  console.log('\nSaved to bench/RESULTS.md');
}

const NOTES =
  `Anchors, measured on the same engine in the same run, while the service is up and idle: ` +
  `pgbench TPC-B (${CONNECTIONS} clients, 2 threads, prepared statements, a scratch database of the ` +
  `service's server; the create + confirm ratio is pairs/s ÷ tps, a pair being two requests and two ` +
  `transactions; it is judged at scale ${PGBENCH_SCALE}, pgbench's default, as decision 0022 sets it, ` +
  `where all clients update one branches row, and shown against scale ` +
  `${PGBENCH_SCALE_WIDE} too, where each client has a branch of its own). Taken in turn with the ` +
  `scenario, in four windows alternating with its four (bare, service, service, bare, bare, service, ` +
  `service, bare), both sides pooled, ± half the spread of the bare windows (how much the machine ` +
  `drifted meanwhile): the bare wallet transaction with each pay-from-balance row (bench/anchors.ts: ` +
  `${CONNECTIONS} pg connections in this process paying drafts as fast as they go, BEGIN, draft → paid, its ` +
  `event, the issuance job, the wallet debit where it covers the price, the ledger entry, COMMIT, on ` +
  `tables shaped as the service's in a scratch database of the service's server, over as many wallets ` +
  `as the row has partners: 50, or one for the hot-wallet row's context; each window a quarter of the ` +
  `scenario's length), and bare node:http answering a fixed JSON with each get-offers row (each ` +
  `window a quarter of the scenario's length).\n\n` +
  `p50/p99 of a pair run from sending create-order to the confirm's reply; of issuance, from the pay ` +
  `reply to the completed webhook's arrival. Rows marked WORKERS=false measure the request path; ` +
  `issuance runs in worker instances (here nothing issues those paid orders) and is measured by ` +
  `bench/issuance.ts on services of its own. The pay-from-balance rows create their partners, wallets ` +
  `and one draft per payment before the measured windows, and pay a quarter of the drafts in each. get-order runs on two services and databases ` +
  `of their own, filled by \`npm run seed:orders\` to the sizes the rows name, their windows alternating. Every window on a database, anchors' and scenarios', ` +
  `starts after its setup on a settled database (VACUUM (ANALYZE), then CHECKPOINT): the checkpoint ` +
  `and autovacuum a setup's bulk writes set off do not run under the next window. Latencies of the ` +
  `get-offers and get-order rows are to the microsecond (autocannon's own are whole milliseconds). ` +
  `RSS is the service's node process (VmRSS), not the embedded PostgreSQL's processes.`;

function nproc(): string {
  try {
    return execFileSync('nproc').toString().trim();
  } catch {
    return '?';
  }
}

function line(r: Row): string {
  const ratio = r.ratio === '—' ? '' : `, ratio ${r.ratio}`;
  const judged = r.target === '—' ? '' : `; anchor ${r.anchor}${ratio}; target ${r.target}: ${r.met}`;
  return `${r.scenario} on ${r.engine}: ${r.rate}, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors${judged}`;
}

const HEAD: Record<keyof Row, string> = {
  scenario: 'scenario',
  engine: 'engine',
  rate: 'rate',
  p50: 'p50 ms',
  p99: 'p99 ms',
  anchor: 'anchor',
  ratio: 'ratio',
  target: 'target',
  met: 'met?',
  errors: 'errors',
};

function render(rows: Row[]): string {
  const keys = Object.keys(HEAD) as (keyof Row)[];
  const cells = [HEAD, ...rows].map((r) => keys.map((k) => r[k]));
  // Padded as prettier pads markdown tables, so the saved file passes `npm run format:check`.
  const width = keys.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const pad = (r: string[]) => `| ${r.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  return [
    pad(cells[0]!),
    `| ${width.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.slice(1).map(pad),
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
