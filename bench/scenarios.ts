import autocannon from 'autocannon';
import { signatureHeader } from '../src/signature.ts';
import type { Anchor, WalletWindow } from './anchors.ts';
import type { Running } from './processes.ts';

export interface Measured {
  /** Requests per second that answered 2xx (the pair scenarios: pairs per second). */
  rate: number;
  unit: 'req/s' | 'pairs/s';
  /** HTTP requests per second of any status: what is compared with the bare server. */
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** The bare server's req/s in the windows alternating with this scenario's, when measured. */
  bareReqPerSec?: number;
  /** How far the fastest and slowest of those bare windows lay apart, as a share of their pooled rate: the machine's drift. */
  bareDrift?: number;
  /** The bare wallet transaction in the windows alternating with this scenario's (the payment rows), and their drift. */
  anchor?: Anchor & { drift: number };
  /** Appended to the scenario's name, for a scenario that measures more than one row. */
  label?: string;
  /** The row's anchor, ratio and target, when the scenario judged it itself (get-order). */
  verdict?: Verdict;
}

/** How a row stands against its target (decision 0022): the anchor and its value, the ratio, the target. */
export interface Verdict {
  anchor: string;
  ratio: string;
  target: string;
  /** undefined: the row has no target of its own. */
  met: boolean | undefined;
}

/** The anchors of one engine, measured on its server when a scenario first needs them. */
export interface Anchors {
  pgbench?: Anchor;
  /** pgbench at scale 50: shown beside the judged ratio, not judged. */
  pgbenchWide?: Anchor;
}

export interface Context {
  seconds: number;
  connections: number;
  /** The bare server to alternate with (scenarios whose target is a share of it). */
  bare?: Running;
  /** The service's database: the environment that names it (for a script) and its URL. */
  database: { env: Record<string, string>; url: string };
  /** bench/anchors.ts settle() on that database: called by a scenario between its setup and its load. */
  settle(): Promise<void>;
  /**
   * A second service like the scenario's (WORKERS=false) on a fresh database of the same engine,
   * for a scenario that compares two databases window by window (get-order). Stop it when done.
   */
  sibling(): Promise<Sibling>;
  /**
   * The bare wallet payment over `wallets` wallets on a scratch database of the service's server,
   * for a payment scenario to take windows of in turn with its own (bench/anchors.ts withWalletTx).
   */
  walletTx?<T>(
    wallets: number,
    use: (window: (seconds: number) => Promise<WalletWindow>) => Promise<T>,
  ): Promise<T>;
}

export interface Sibling {
  service: Running;
  database: { env: Record<string, string>; url: string };
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export interface Scenario {
  name: string;
  /**
   * false: measured on a service started with WORKERS=false, the request path alone; issuance
   * (PDFs, ~25 round trips an order) runs in worker instances in production.
   */
  workers?: boolean;
  /** Measured on a service of its own on a fresh database (get-order fills its database). */
  ownDatabase?: boolean;
  /** The anchors judge() takes the row against, measured before the scenario on the same server. */
  anchors?: (keyof Anchors)[];
  run(target: Running, ctx: Context): Promise<Measured | Measured[]>;
  judge?(m: Measured, anchors: Anchors): Verdict;
}

export type Body = Record<string, unknown>;

/** The q-quantile of ascending numbers; NaN when there are none. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

/** Thousands apart by a space, as the README writes figures. */
export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ' ') : '—';

export const pctOf = (part: number, whole: number) => `${fmt((100 * part) / whole)} %`;

/**
 * Load that is not recorded, before each measured window of the get-offers and create+confirm
 * scenarios (the bare server's too), while V8 compiles the hot paths: in one-second slices, at least
 * BENCH_WARMUP_SECONDS (default 2) of them, until two slices in a row run no faster than 5 % above
 * the best before them (one slower slice can be the machine's noise), at most 20. A fixed 2 s had been enough on a fast day; on a day the machine ran at a third
 * of that speed the service still climbed for 8 s, and the first scenario after start-up measured
 * its own warm-up.
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

export async function warmUp(load: (seconds: number) => Promise<{ requests: { total: number } }>) {
  let best = 0;
  let flat = 0;
  for (let slice = 1; slice <= 20; slice++) {
    const started = performance.now();
    const { requests } = await load(1);
    const rate = (requests.total * 1000) / (performance.now() - started);
    flat = rate <= best * 1.05 ? flat + 1 : 0;
    best = Math.max(best, rate);
    if (slice >= WARMUP_SECONDS && flat >= 2) return;
  }
}

/**
 * Signed POSTs at full speed: a load function of seconds. One body: the same bytes every time;
 * several: each request the next of them, signed beforehand. Its result carries each 2xx reply's
 * latency to the microsecond (autocannon's own percentiles are whole milliseconds: a p99 of 13 or
 * 16 ms then moves a ratio of two p99s by 8 % on rounding alone).
 */
export function signedLoad(target: Running, path: string, bodies: Body | Body[], connections: number) {
  const signed = [bodies].flat().map((body) => {
    const payload = JSON.stringify(body);
    return {
      body: payload,
      headers: {
        'content-type': 'application/json',
        'x-hmac-signature': signatureHeader(target.demo.id, target.demo.secret, payload),
      },
    };
  });
  let next = 0;
  return async (duration: number): Promise<Load> => {
    const latencies: number[] = [];
    // Without a callback autocannon answers its tracker, an emitter that is also a promise.
    const run = autocannon({
      url: `${target.url}${path}`,
      method: 'POST',
      connections,
      duration,
      ...signed[0]!,
      ...(signed.length > 1
        ? { requests: [{ setupRequest: (req) => ({ ...req, ...signed[next++ % signed.length]! }) }] }
        : {}),
    }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
    run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
    const result = await run;
    return Object.assign(result, { latencies: latencies.sort((a, b) => a - b) });
  };
}

/** An autocannon result with its 2xx latencies in ms, ascending, to the microsecond. */
export type Load = autocannon.Result & { latencies: number[] };

/** A full-speed window's figures: 2xx and all requests a second over its duration, latencies. */
export function timed(r: Load): Measured {
  return {
    rate: r['2xx'] / r.duration,
    unit: 'req/s',
    reqPerSec: r.requests.total / r.duration,
    p50Ms: quantile(r.latencies, 0.5),
    p99Ms: quantile(r.latencies, 0.99),
    errors: r.errors + r.timeouts + r.non2xx,
  };
}

/** Several windows' replies as one row: all 2xx over all their time, latencies pooled. */
export function pooled(loads: Load[]): Measured {
  const duration = loads.reduce((n, l) => n + l.duration, 0);
  const latencies = loads.flatMap((l) => l.latencies).sort((a, b) => a - b);
  return {
    rate: loads.reduce((n, l) => n + l['2xx'], 0) / duration,
    unit: 'req/s',
    reqPerSec: loads.reduce((n, l) => n + l.requests.total, 0) / duration,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    errors: loads.reduce((n, l) => n + l.errors + l.timeouts + l.non2xx, 0),
  };
}

/** Windows of the service and of the bare server, taken in turn, each 1/ROUNDS of BENCH_SECONDS (at least 2 s). */
const OFFERS_ROUNDS = 4;

/**
 * One signed request, the same bytes every time: autocannon at full speed. Given the bare server,
 * the service's windows alternate with the bare server's, four of each (bare, service, service,
 * bare, bare, service…: each goes first as often as second), and each side pools its windows: both
 * sample the same minutes of a shared machine whose speed drifts by a third within minutes. Taken
 * as one service window between two bare ones of half its length, the same code's share came out
 * anywhere between 41 and 63 %, the two bare windows of one row up to 14 % apart.
 */
export function offers(name: string, body: Body, target?: { share: number; p99Ms: number }): Scenario {
  return {
    name,
    async run(service, { seconds, connections, bare }) {
      const load = signedLoad(service, '/v1/get-offers', body, connections);
      await warmUp(load);
      if (!bare) return timed(await load(seconds));
      const baseline = signedLoad(bare, '/v1/get-offers', {}, connections);
      const windows: { service: Load[]; bare: Load[] } = { service: [], bare: [] };
      const each = Math.max(2, Math.round(seconds / OFFERS_ROUNDS));
      for (let round = 0; round < OFFERS_ROUNDS; round++) {
        for (const side of round % 2 === 0
          ? (['bare', 'service'] as const)
          : (['service', 'bare'] as const)) {
          windows[side].push(await (side === 'bare' ? baseline : load)(each));
        }
      }
      const bareRates = windows.bare.map((r) => r.requests.total / r.duration);
      const bareReqPerSec = pooled(windows.bare).reqPerSec;
      return {
        ...pooled(windows.service),
        bareReqPerSec,
        bareDrift: (Math.max(...bareRates) - Math.min(...bareRates)) / bareReqPerSec,
      };
    },
    judge(m) {
      const base = m.bareReqPerSec;
      const anchor =
        base === undefined
          ? 'bare node:http: see its rows'
          : `bare node:http ${fmt(base)} req/s ± ${fmt((100 * (m.bareDrift ?? 0)) / 2)} %`;
      return {
        anchor,
        ratio: base === undefined ? '—' : `${pctOf(m.reqPerSec, base)} (req/s ÷ req/s)`,
        target: target ? `≥ ${100 * target.share} %, p99 ≤ ${target.p99Ms} ms` : '— (target: rca only)',
        met:
          target && base !== undefined
            ? m.reqPerSec / base >= target.share && m.p99Ms <= target.p99Ms && m.errors === 0
            : undefined,
      };
    },
  };
}

/**
 * create-order, then a second call about the draft it answered, on each connection in turn. The
 * create bodies come from a pre-signed pool; the second body is signed per request, with the id
 * from the create reply. Pair latency is measured from sending the create to the second reply.
 */
export function pairs(
  name: string,
  items: Body[],
  second: (order: { id: string; price: number }) => [endpoint: string, body: Body],
): Scenario {
  return {
    name,
    workers: false,
    async run(target, { seconds, connections, settle }) {
      const sign = (payload: string) => signatureHeader(target.demo.id, target.demo.secret, payload);
      const startDate = await minStartDate(target, items[0]!);
      const pool = Array.from({ length: 1000 }, (_, i) => {
        const payload = JSON.stringify({
          customer: { phone: `+3736${String(1_000_000 + i).slice(1)}`, name: `Bench ${i}` },
          products: items.map((it) => ({ ...it, start_date: startDate })),
        });
        return { payload, signature: sign(payload) };
      });
      let next = 0;
      const latencies: number[] = [];
      let done = 0;
      let failed = 0;
      interface Ctx {
        t0?: number;
        order?: { id: string; price: number };
      }
      const headers = { 'content-type': 'application/json' };
      const load = (duration: number) =>
        autocannon({
          url: target.url,
          connections,
          duration,
          requests: [
            {
              method: 'POST',
              path: '/v1/create-order',
              headers,
              setupRequest(req, context: Ctx) {
                const b = pool[next++ % pool.length]!;
                context.t0 = performance.now();
                return { ...req, body: b.payload, headers: { ...headers, 'x-hmac-signature': b.signature } };
              },
              onResponse(status, body, context: Ctx) {
                context.order =
                  status === 200 ? (JSON.parse(body) as { id: string; price: number }) : undefined;
                if (status !== 200) failed++;
              },
            },
            {
              method: 'POST',
              path: '/v1/confirm-order',
              headers,
              setupRequest(req, context: Ctx) {
                if (!context.order) return undefined as never; // back to a create
                const [endpoint, body] = second(context.order);
                const payload = JSON.stringify(body);
                return {
                  ...req,
                  path: `/v1/${endpoint}`,
                  body: payload,
                  headers: { ...headers, 'x-hmac-signature': sign(payload) },
                };
              },
              onResponse(status, _body, context: Ctx) {
                if (status === 200) {
                  done++;
                  latencies.push(performance.now() - context.t0!);
                } else failed++;
              },
            },
          ],
        });
      await settle();
      await warmUp(load);
      latencies.length = 0;
      done = 0;
      failed = 0;
      const r = await load(seconds);
      latencies.sort((a, b) => a - b);
      return {
        rate: done / r.duration,
        unit: 'pairs/s',
        reqPerSec: r.requests.average,
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        errors: r.errors + r.timeouts + failed,
      };
    },
  };
}

async function minStartDate(target: Running, item: Body): Promise<string> {
  const { product, vehicle, duration, idnx } = item;
  const payload = JSON.stringify({ product, vehicle, duration, idnx });
  const res = await fetch(`${target.url}/v1/get-offers`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hmac-signature': signatureHeader(target.demo.id, target.demo.secret, payload),
    },
    body: payload,
  });
  const body = (await res.json()) as { offers?: { min_start_date: string }[] };
  if (!res.ok || !body.offers?.[0])
    throw new Error(`get-offers answered ${res.status}: ${JSON.stringify(body)}`);
  return body.offers[0].min_start_date;
}
