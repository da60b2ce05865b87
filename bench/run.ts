import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { offers, SCENARIOS, type Measured } from './scenarios.ts';
import { startBare, startPolita, type Running } from './processes.ts';

/**
 * `npm run bench`: the bare node:http baseline, then every scenario of bench/scenarios.ts against
 * the service on its embedded PostgreSQL (a fresh DATA_DIR) and (when 127.0.0.1:5432 answers) on a
 * fresh database of that server. Prints a table and keeps the last run in bench/RESULTS.md.
 *
 * BENCH_SECONDS (default 10) per scenario; BENCH_ENGINES=embedded,postgres to pick engines;
 * BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres) the server to make databases on;
 * BENCH_NODE_ARGS extra node flags for the service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof");
 * BENCH_ONLY=<text>[,<text>…] runs only the scenarios whose name contains one of them.
 */
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = 50;
const PG_SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const ENGINES = (process.env.BENCH_ENGINES || 'embedded,postgres').split(',');
const NODE_ARGS = (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean);
const ONLY = (process.env.BENCH_ONLY || '').split(',');

interface Row extends Measured {
  scenario: string;
  engine: string;
  /** False: the service ran with WORKERS=false. */
  workers: boolean;
}

interface Engine {
  name: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

async function engines(): Promise<Engine[]> {
  const list: Engine[] = [];
  if (ENGINES.includes('embedded')) {
    // The default deployment: the service starts its own PostgreSQL in DATA_DIR.
    const dir = mkdtempSync(join(tmpdir(), 'polita-bench-'));
    list.push({
      name: 'embedded',
      env: { DATA_DIR: dir },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    });
  }
  if (ENGINES.includes('postgres')) {
    const name = `polita_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_SERVER, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
      await admin.query(`create database ${name}`);
      const url = new URL(PG_SERVER);
      url.pathname = `/${name}`;
      list.push({
        name: 'postgres',
        // Its DATA_DIR holds only the sandbox's secret key and admin token, not the repository's ./data.
        env: { DATABASE_URL: url.toString(), DATA_DIR: mkdtempSync(join(tmpdir(), 'polita-bench-pg-')) },
        async cleanup() {
          const c = new pg.Client({ connectionString: PG_SERVER });
          await c.connect();
          await c.query(`drop database if exists ${name} with (force)`);
          await c.end();
        },
      });
    } catch (err) {
      console.log(`PostgreSQL at ${PG_SERVER} not available (${(err as Error).message}): skipped`);
    } finally {
      await admin.end().catch(() => {});
    }
  }
  return list;
}

async function main(): Promise<void> {
  // Other work on the machine moves every figure: the load average is recorded with the results.
  const loadAtStart = loadavg()[0]!.toFixed(2);
  console.log(
    `Polita benchmark: ${CONNECTIONS} connections, ${SECONDS} s a scenario (load ${loadAtStart})\n`,
  );
  const rows: Row[] = [];

  // The bare server answers anything: its fixed offers reply is the ceiling for every scenario.
  // It runs for the whole benchmark. Each get-offers scenario is bracketed by two bare windows and
  // takes its share against them; it is also measured before and after all the scenarios (the mean
  // of the two is the 100 % of the other rows): on a shared 2-CPU machine one bare run alone swung between
  // 57 000 and 72 000 req/s, and on another day between 23 000 and 33 000.
  const bare = await startBare();
  const measureBare = async (when: string) => {
    const m = await offers('bare node:http', {}).run(bare, SECONDS, CONNECTIONS);
    const row = { scenario: `bare node:http (fixed JSON), ${when}`, engine: '-', workers: true, ...m };
    console.log(line(row, m.reqPerSec));
    return row;
  };
  const bareBefore = await measureBare('before');
  let bareRps = bareBefore.reqPerSec;

  const chosen = SCENARIOS.filter((s) => ONLY.some((o) => s.name.includes(o)));
  for (const engine of await engines()) {
    try {
      // One service per mode, one after the other: a DATA_DIR takes a single process.
      for (const workers of [true, false]) {
        const group = chosen.filter((s) => (s.workers ?? true) === workers);
        if (group.length === 0) continue;
        const service: Running = await startPolita(
          workers ? engine.env : { ...engine.env, WORKERS: 'false' },
          NODE_ARGS,
        );
        try {
          for (const scenario of group) {
            const m = await scenario.run(service, SECONDS, CONNECTIONS, bare);
            rows.push({ scenario: scenario.name, engine: engine.name, workers, ...m });
            console.log(line(rows.at(-1)!, bareRps));
          }
        } finally {
          await service.stop();
        }
      }
    } finally {
      await engine.cleanup();
    }
  }

  const bareAfter = await measureBare('after');
  await bare.stop();
  bareRps = (bareBefore.reqPerSec + bareAfter.reqPerSec) / 2;
  rows.unshift(bareBefore, bareAfter, {
    ...bareAfter,
    scenario: 'bare node:http (fixed JSON), mean: the 100 %',
    rate: (bareBefore.rate + bareAfter.rate) / 2,
    reqPerSec: bareRps,
    p99Ms: Math.max(bareBefore.p99Ms, bareAfter.p99Ms),
    errors: bareBefore.errors + bareAfter.errors,
  });
  const table = render(rows, bareRps);
  console.log(`\n${table}`);
  const machine = `${cpus().length} CPUs (nproc ${nproc()}), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
  writeFileSync(
    new URL('./RESULTS.md', import.meta.url),
    `# Benchmark results (last run)\n\n` +
      `- Date: ${new Date().toISOString()}\n- Machine: ${machine}\n` +
      `- Load average (1 min) at start / end: ${loadAtStart} / ${loadavg()[0]!.toFixed(2)}\n` +
      `- Command: \`BENCH_SECONDS=${SECONDS} npm run bench\` (${CONNECTIONS} connections; load generator and ` +
      `each server in separate processes)\n` +
      `- Targets: get-offers rca ≥ 40 % of bare req/s with p99 < 15 ms; get-offers medical and ` +
      `vignette:eu ≥ 30 % of bare; create+confirm ≥ 800 pairs/s on PostgreSQL; pay-from-balance on ` +
      `PostgreSQL ≥ 800 payments/s over many partners, p99 < 100 ms on one hot wallet\n\n` +
      `${table}\n\n` +
      `"% of bare" compares HTTP requests per second of any status with the bare node:http server: ` +
      `a get-offers row with the mean of two bare windows of half its length just before and after it ` +
      `("bare req/s"; ± half their difference: how much the machine drifted meanwhile), ` +
      `any other row with the mean of the bare runs before and after the scenarios; ` +
      `a pair is two requests. p99 of a pair runs from sending create-order to the second reply.\n\n` +
      `Instance "WORKERS=false": the row measures the request path; ` +
      `issuance runs in worker instances (in production a separate deployment on the same database; ` +
      `here nothing issues the paid orders). The pay-from-balance rows create their partners, wallets ` +
      `and one draft per payment before the measured window, and measure only the payments.\n`,
  );
  console.log('\nSaved to bench/RESULTS.md');
}

function nproc(): string {
  try {
    return execFileSync('nproc').toString().trim();
  } catch {
    return '?';
  }
}

function line(r: Row, bareRps: number): string {
  const mode = r.workers ? '' : ' (WORKERS=false: request path; issuance runs in worker instances)';
  const turns = r.bareReqPerSec ? ` (bare ${bareCell(r, bareRps)} req/s around it)` : '';
  return `${r.scenario} on ${r.engine}${mode}: ${r.rate.toFixed(0)} ${r.unit}, p99 ${r.p99Ms.toFixed(1)} ms, ${pct(r, bareRps)} of bare${turns}, ${r.errors} errors`;
}

const pct = (r: Row, bareRps: number) =>
  `${((100 * r.reqPerSec) / (r.bareReqPerSec ?? bareRps)).toFixed(0)} %`;

/** The baseline of a row; for a bracketed row with how far its two bare windows lay apart. */
const bareCell = (r: Row, bareRps: number) =>
  r.bareReqPerSec === undefined
    ? bareRps.toFixed(0)
    : `${r.bareReqPerSec.toFixed(0)} ± ${((100 * (r.bareDrift ?? 0)) / 2).toFixed(0)} %`;

function render(rows: Row[], bareRps: number): string {
  const head = [
    'scenario',
    'engine',
    'instance',
    'rate',
    'p99 ms',
    'bare req/s',
    '% of bare req/s',
    'errors',
  ];
  const body = rows.map((r) => [
    r.scenario,
    r.engine,
    r.workers ? 'API + workers' : 'WORKERS=false',
    `${r.rate.toFixed(0)} ${r.unit}`,
    r.p99Ms.toFixed(1),
    bareCell(r, bareRps),
    pct(r, bareRps),
    String(r.errors),
  ]);
  // Padded as prettier pads markdown tables, so the saved file passes `npm run format:check`.
  const width = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const pad = (r: string[]) => `| ${r.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  return [pad(head), `| ${width.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(pad)].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
