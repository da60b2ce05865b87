import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { signatureHeader } from '../src/signature.ts';
import { threadCpu, type Running } from './processes.ts';
import { walletAnchor, type WalletWindow } from './anchors.ts';
import { pooled, WARMUP_SECONDS, type Body, type Load, type Scenario } from './scenarios.ts';

interface Partner {
  id: string;
  secret: string;
}

/**
 * pay-order-from-balance. Every payment needs a draft of its own, so the setup (not measured)
 * creates `partners` partners with wallets, `perSecond × seconds` drafts spread over them in
 * turn, and credits each wallet with what its drafts cost; then only the payments are measured,
 * one per draft, as fast as `connections` connections go, in four windows that alternate with
 * four of the bare wallet transaction (the row's anchor) when the context offers it. With one
 * partner every payment queues on the same wallet row lock: the hot-wallet case.
 *
 * It also prints what a measured payment cost in CPU: the service's process (every thread) and the
 * PostgreSQL backends serving the service's database, from the scheduler's counts in /proc. On this
 * shared machine a rate moves with everyone else's load; the CPU a payment takes moves much less,
 * so a change to the payment is judged by it (CONTRIBUTING.md, "Performance").
 */
export function payments(name: string, item: Body, partners: number, perSecond = 1500): Scenario {
  return {
    name,
    workers: false,
    async run(target, { seconds, connections, settle, walletTx, database }) {
      const tag = randomBytes(3).toString('hex');
      const owners: Partner[] = [];
      for (let i = 0; i < partners; i++) {
        owners.push(await admin<Partner>(target, 'POST', '/admin/partners', { name: `bench ${tag} ${i}` }));
      }
      const startDate = await minStartDate(target, owners[0]!, item);
      const warmup = perSecond * WARMUP_SECONDS;
      const count = warmup + Math.max(1000, perSecond * seconds);
      const drafts: { owner: Partner; id: string }[] = [];
      const spentBani = new Map<string, number>();
      let made = 0;
      // The drafts go in over a few connections at once, as a partner's own system would send them.
      await Promise.all(
        Array.from({ length: Math.min(connections, 20) }, async () => {
          while (made < count) {
            const n = made++;
            const owner = owners[n % owners.length]!;
            const order = await call<{ id: string; price: number }>(target, owner, 'create-order', {
              customer: { phone: `+3736${String(1_000_000 + (n % 1_000_000)).slice(1)}`, name: `Bench ${n}` },
              products: [{ ...item, start_date: startDate }],
            });
            drafts.push({ owner, id: order.id });
            spentBani.set(owner.id, (spentBani.get(owner.id) ?? 0) + Math.round(order.price * 100));
          }
        }),
      );
      for (const owner of owners) {
        // What was spent, in credits of at most 10 million MDL each (decision 0048).
        const MAX_CREDIT_BANI = 1_000_000_000;
        for (let left = spentBani.get(owner.id) ?? 0, i = 0; left > 0; left -= MAX_CREDIT_BANI, i++) {
          await admin(target, 'POST', `/admin/partners/${owner.id}/wallet/credits`, {
            wallet: 'online',
            amount: Math.min(left, MAX_CREDIT_BANI) / 100,
            reference: `bench-${tag}-${owner.id}-${i}`,
          });
        }
      }

      const cpu = await cpuMeter(target.pid, database.url);
      const reported = <T>(result: Promise<T>) =>
        result.finally(() => {
          console.log(`${name}: ${cpu.summary()}`);
          return cpu.close();
        });
      let next = 0;
      const headers = { 'content-type': 'application/json' };
      // `amount`: one payment per draft, then stop (duration is ignored).
      // autocannon stops a fixed-amount run on its next one-second tick and reports whole seconds:
      // the window is timed here, from the start to the last reply.
      const load = async (amount: number, measured = true): Promise<Load> => {
        const latencies: number[] = [];
        const before = measured ? await cpu.read() : undefined;
        const startedAt = performance.now();
        let lastReplyAt = startedAt;
        const run = autocannon({
          url: target.url,
          connections,
          amount,
          requests: [
            {
              method: 'POST',
              path: '/v1/pay-order-from-balance',
              headers,
              setupRequest(req) {
                const d = drafts[next++ % drafts.length]!;
                const payload = JSON.stringify({ id: d.id });
                return {
                  ...req,
                  body: payload,
                  headers: {
                    ...headers,
                    'x-hmac-signature': signatureHeader(d.owner.id, d.owner.secret, payload),
                  },
                };
              },
            },
          ],
        }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
        run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
          lastReplyAt = performance.now();
          if (status >= 200 && status < 300) latencies.push(ms);
        });
        const r = await run;
        if (before) cpu.add(before, await cpu.read(), amount);
        return Object.assign(r, {
          duration: (lastReplyAt - startedAt) / 1000,
          latencies: latencies.sort((a, b) => a - b),
        });
      };
      const measured = drafts.length - warmup;
      if (!walletTx) {
        return reported(
          (async () => {
            await settle();
            // The first drafts are paid unmeasured, while V8 compiles the payment path.
            if (warmup > 0) await load(warmup, false);
            return pooled([await load(measured)]);
          })(),
        );
      }
      // The bare transaction's windows alternate with the service's, four of each (bare, service,
      // service, bare, …), as get-offers does with the bare server: the machine's speed drifts
      // by a third within minutes, and both sides sample the same minutes.
      return reported(
        walletTx(partners, async (bare) => {
          await settle();
          if (warmup > 0) await load(warmup, false);
          const windows: { service: Load[]; bare: WalletWindow[] } = { service: [], bare: [] };
          for (let i = 0; i < ROUNDS; i++) {
            for (const side of i % 2 === 0
              ? (['bare', 'service'] as const)
              : (['service', 'bare'] as const)) {
              if (side === 'bare') windows.bare.push(await bare(seconds / ROUNDS));
              else {
                const amount =
                  i === ROUNDS - 1
                    ? measured - (ROUNDS - 1) * Math.floor(measured / ROUNDS)
                    : Math.floor(measured / ROUNDS);
                windows.service.push(await load(amount));
              }
            }
          }
          return { ...pooled(windows.service), anchor: walletAnchor(partners, windows.bare) };
        }),
      );
    },
  };
}

/**
 * CPU a payment, over the measured windows only: the service's threads (schedstat) and the client
 * backends of its database (pg_stat_activity's pids, /proc/<pid>/schedstat; the server runs on this
 * machine, embedded or not), read before and after each window. Autovacuum's workers are left out:
 * when one runs is the server's choice, and it would move the figure by more than a change does.
 */
async function cpuMeter(servicePid: number, databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const own = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const total = { serviceMs: 0, databaseMs: 0, payments: 0 };
  const nsOf = (pid: number) => {
    try {
      return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      return undefined; // it ended
    }
  };
  type Reading = { serviceMs: number; backends: Map<number, number> };
  return {
    async read(): Promise<Reading> {
      const { rows } = await client.query<{ pid: number }>(
        `select pid from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' and pid <> $1`,
        [own],
      );
      const backends = new Map<number, number>();
      for (const { pid } of rows) {
        const ns = nsOf(pid);
        if (ns !== undefined) backends.set(pid, ns);
      }
      let serviceMs = 0;
      for (const ms of threadCpu(servicePid).values()) serviceMs += ms;
      return { serviceMs, backends };
    },
    /** A backend that started within the window counts whole; one that ended within it is lost. */
    add(from: Reading, to: Reading, payments: number) {
      total.serviceMs += to.serviceMs - from.serviceMs;
      for (const [pid, ns] of to.backends) total.databaseMs += (ns - (from.backends.get(pid) ?? 0)) / 1e6;
      total.payments += payments;
    },
    summary() {
      const us = (ms: number) => Math.round((ms * 1000) / total.payments);
      return total.payments === 0
        ? 'no measured payments'
        : `CPU a payment: service ${us(total.serviceMs)} µs, database backends ${us(total.databaseMs)} µs, ` +
            `together ${us(total.serviceMs + total.databaseMs)} µs (${total.payments} payments)`;
    },
    close: () => client.end(),
  };
}

/** Windows of the service and of the bare transaction, taken in turn. */
const ROUNDS = 4;

async function admin<T>(target: Running, method: string, path: string, body: Body): Promise<T> {
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.adminToken}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function call<T>(target: Running, as: Partner, endpoint: string, body: Body): Promise<T> {
  const payload = JSON.stringify(body);
  const res = await fetch(`${target.url}/v1/${endpoint}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hmac-signature': signatureHeader(as.id, as.secret, payload),
    },
    body: payload,
  });
  if (!res.ok) throw new Error(`${endpoint} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function minStartDate(target: Running, as: Partner, item: Body): Promise<string> {
  const { product, vehicle, duration, idnx } = item;
  const body = await call<{ offers: { min_start_date: string }[] }>(target, as, 'get-offers', {
    product,
    vehicle,
    duration,
    idnx,
  });
  return body.offers[0]!.min_start_date;
}
