import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { scratchDatabase } from './anchors.ts';
import { pinLoadGenerator, startPolita, threadCpu, type Running } from './processes.ts';
import { quantile, signedLoad, warmUp, type Body } from './scenarios.ts';
import { getOrderBodies, ORDERS_SMALL } from './get-order.ts';

/**
 * `npm run bench:ab -- <git ref>`: this checkout against the commit `ref` names, on one request
 * at 50 connections (default get-offers rca; AB_PATH and AB_BODY for another signed POST). Both
 * services run at once, each on a scratch database of the server at BENCH_PG, and are loaded in
 * turn: AB_ROUNDS (default 8) rounds of AB_SECONDS (default 3) each, old then new, then new then
 * old. AB_PATH=/v1/get-order without AB_BODY seeds each database with 10 000 orders first and asks
 * for random demo ones, as the benchmark's get-order row does. Prints each side's median req/s,
 * the median CPU a request of its main thread and of the PostgreSQL sessions of its database
 * (schedstat of each, the server being on this machine), and the median of the rounds' new ÷ old.
 *
 * Why: whole runs of the same code moved by ±5 % within minutes on this shared machine, more than
 * a change worth making; taken in turn in the same minutes, a round's ratio moves by a few per cent
 * and the median settles. The ref is checked out in a temporary git worktree, with this checkout's
 * node_modules when the lockfile is the same and `npm ci` otherwise, and removed at the end.
 *
 * With two CPUs or more, both services run on CPU 0 and the load generator (this process) on CPU 1
 * (BENCH_SERVICE_CPUS, BENCH_LOAD_CPUS): a co-located generator takes CPU from the service it
 * measures, and a change that moves work between the two then shows as a gain or loss it is not.
 * The side not being loaded idles meanwhile. The database server is not pinned (get-offers does
 * not use it; a route that does should be measured on a quiet machine).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ref = process.argv[2];
if (!ref) {
  console.error('usage: npm run bench:ab -- <git ref>   (e.g. HEAD~1)');
  process.exit(2);
}
const PG_SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.AB_ROUNDS || 8);
const SECONDS = Number(process.env.AB_SECONDS || 3);
const PATH = process.env.AB_PATH || '/v1/get-offers';
const GET_ORDER = PATH === '/v1/get-order' && !process.env.AB_BODY;
const BODY = JSON.parse(
  process.env.AB_BODY || '{"product":"rca","vehicle":"100000001","duration":365,"idnx":"2003000000016"}',
) as Body;

console.log(pinLoadGenerator());
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
const dir = mkdtempSync(join(tmpdir(), 'polita-ab-'));
git('worktree', 'add', '--detach', dir, commit);
try {
  let sameLock = true;
  try {
    execFileSync('git', ['diff', '--quiet', commit, '--', 'package-lock.json'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  } catch {
    sameLock = false;
  }
  if (sameLock) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  await scratchDatabase(PG_SERVER, 'polita_ab_old', (oldUrl) =>
    scratchDatabase(PG_SERVER, 'polita_ab_new', async (newUrl) => {
      const sides: Record<'old' | 'new', Running> = {
        old: await startOld(oldUrl, dir),
        new: await startPolita({ DATABASE_URL: newUrl }),
      };
      try {
        const bodies = GET_ORDER
          ? {
              old: await getOrderBodies(
                sides.old,
                { env: { DATABASE_URL: oldUrl }, url: oldUrl },
                ORDERS_SMALL,
              ),
              new: await getOrderBodies(
                sides.new,
                { env: { DATABASE_URL: newUrl }, url: newUrl },
                ORDERS_SMALL,
              ),
            }
          : { old: BODY, new: BODY };
        await compare(sides, bodies, { old: oldUrl, new: newUrl });
      } finally {
        await Promise.all([sides.old.stop(), sides.new.stop()]);
      }
    }),
  );
} finally {
  git('worktree', 'remove', '--force', dir);
}

/**
 * The old service, as the benchmark runs its services (the limit a billion a minute). Commits before
 * e00c027 refuse more than a million a minute: they get a million, and a round that reaches it
 * (429s) stops the comparison, saying so.
 */
async function startOld(url: string, root: string): Promise<Running> {
  try {
    return await startPolita({ DATABASE_URL: url }, [], root);
  } catch (err) {
    if (!/RATE_LIMIT_PER_MINUTE must be/.test(String(err))) throw err;
    console.log('old: RATE_LIMIT_PER_MINUTE capped at 1 000 000 by that commit');
    return startPolita({ DATABASE_URL: url, RATE_LIMIT_PER_MINUTE: '1000000' }, [], root);
  }
}

/**
 * CPU time, ms, of the server's sessions on a database (schedstat of each backend process), read
 * through a session of its own that it leaves out. A session that ends between two readings takes
 * its time with it: the service's pool keeps its sessions while it is loaded.
 */
async function databaseCpu(url: string): Promise<{ read(): Promise<number>; end(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return {
    async read() {
      const { rows } = await c.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      let ns = 0;
      for (const { pid } of rows) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
          // ended since the query, or on another machine
        }
      }
      return ns / 1e6;
    },
    end: () => c.end(),
  };
}

async function compare(
  sides: Record<'old' | 'new', Running>,
  bodies: Record<'old' | 'new', Body | Body[]>,
  urls: Record<'old' | 'new', string>,
): Promise<void> {
  const loads = {
    old: signedLoad(sides.old, PATH, bodies.old, 50),
    new: signedLoad(sides.new, PATH, bodies.new, 50),
  };
  await warmUp(loads.old);
  await warmUp(loads.new);
  const seen = {
    old: { rate: [] as number[], us: [] as number[], dbUs: [] as number[] },
    new: { rate: [] as number[], us: [] as number[], dbUs: [] as number[] },
  };
  const databases = { old: await databaseCpu(urls.old), new: await databaseCpu(urls.new) };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
        const main = () => threadCpu(sides[side].pid).get('MainThread') ?? 0;
        const before = main();
        const dbBefore = await databases[side].read();
        const r = await loads[side](SECONDS);
        const ms = main() - before;
        const dbMs = (await databases[side].read()) - dbBefore;
        if (r.non2xx + r.errors > 0)
          throw new Error(
            `${side}: ${r.non2xx} non-2xx answers (429s: its rate limit; fewer AB_ROUNDS or AB_SECONDS), ${r.errors} errors`,
          );
        seen[side].rate.push(r.requests.total / r.duration);
        seen[side].us.push((ms * 1000) / r.requests.total);
        seen[side].dbUs.push((dbMs * 1000) / r.requests.total);
      }
    }
  } finally {
    await Promise.all([databases.old.end(), databases.new.end()]);
  }
  const median = (xs: number[]) =>
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  for (const side of ['old', 'new'] as const) {
    console.log(
      `${side === 'old' ? `old (${commit.slice(0, 7)})` : 'new (this checkout)'}: ` +
        `${Math.round(median(seen[side].rate))} req/s, main thread ${median(seen[side].us).toFixed(1)} µs a request ` +
        `(rounds: ${seen[side].us.map((u) => u.toFixed(1)).join(' ')}), ` +
        `database ${median(seen[side].dbUs).toFixed(1)} µs a request`,
    );
  }
  const ratios = seen.new.rate.map((r, i) => r / seen.old.rate[i]!);
  console.log(
    `new ÷ old by round: ${ratios.map((r) => r.toFixed(3)).join(' ')}; median ${median(ratios).toFixed(3)}`,
  );
}
