import autocannon from 'autocannon';
import { signatureHeader } from '../src/signature.ts';
import { payments } from './payments.ts';
import type { Running } from './processes.ts';

export interface Measured {
  /** Requests per second that answered 2xx (the pair scenarios: pairs per second). */
  rate: number;
  unit: 'req/s' | 'pairs/s';
  /** HTTP requests per second of any status: what is compared with the bare server. */
  reqPerSec: number;
  p99Ms: number;
  errors: number;
  /** The bare server's req/s in the windows just before and after this scenario's, when measured. */
  bareReqPerSec?: number;
  /** How far those two bare windows lay apart, as a share of their mean: the machine's drift. */
  bareDrift?: number;
}

export interface Scenario {
  name: string;
  /**
   * false: measured on a service started with WORKERS=false, the request path alone; issuance
   * (PDFs, ~25 round trips an order) runs in worker instances in production.
   */
  workers?: boolean;
  /** `bare`: the bare server to alternate with (scenarios whose target is a share of it). */
  run(target: Running, seconds: number, connections: number, bare?: Running): Promise<Measured>;
}

export type Body = Record<string, unknown>;

const RCA_ITEM = {
  product: 'rca',
  vehicle: '100000001',
  duration: 365,
  insurance_company: 'moldasig',
  idnx: '2003000000016',
};

/**
 * The scenario table. Another product's quote is one line: `offers('get-offers green-card', {...})`;
 * another way to pay is one line: `pairs('create+pay-from-balance rca', [RCA_ITEM], (o) =>
 * ['pay-order-from-balance', { id: o.id }])` (mind the demo wallet's 10 500 MDL).
 */
export const SCENARIOS: Scenario[] = [
  offers('get-offers rca', { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' }),
  offers('get-offers medical', {
    product: 'medical',
    covered_territories: ['DEU', 'FRA'],
    persons: ['1990-05-10', '2015-03-01'],
    start_date: '2026-12-01',
    end_date: '2026-12-10',
    is_multiple_type: false,
    include_additional_risk: false,
    activity: 'TRVL',
  }),
  offers('get-offers vignette:eu', {
    product: 'vignette:eu',
    country: 'HU',
    vehicle: '100000001',
    lang: 'EN',
  }),
  pairs('create+confirm rca', [RCA_ITEM], (o) => [
    'confirm-order',
    {
      id: o.id,
      payment: {
        receipt_id: `R${o.id}`,
        transaction_id: `T${o.id}`,
        paid_at: Date.now(),
        amount: o.price,
      },
    },
  ]),
  payments('pay-from-balance rca, 50 partners', RCA_ITEM, 50),
  payments('pay-from-balance rca, one hot wallet', RCA_ITEM, 1),
];

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

/** One signed POST at full speed: a load function of seconds. */
function signedLoad(target: Running, path: string, body: Body, connections: number) {
  const payload = JSON.stringify(body);
  return (duration: number) =>
    autocannon({
      url: `${target.url}${path}`,
      method: 'POST',
      connections,
      duration,
      headers: {
        'content-type': 'application/json',
        'x-hmac-signature': signatureHeader(target.demo.id, target.demo.secret, payload),
      },
      body: payload,
    });
}

/**
 * One signed request, the same bytes every time: autocannon at full speed. Given the bare server,
 * the measured window is bracketed by two bare windows of half its length, and the scenario's share
 * is taken against their mean: on a shared machine whose speed drifts by a third within minutes, a
 * bare server measured minutes earlier is no baseline.
 */
export function offers(name: string, body: Body): Scenario {
  return {
    name,
    async run(target, seconds, connections, bare) {
      const load = signedLoad(target, '/v1/get-offers', body, connections);
      const baseline = bare && signedLoad(bare, '/v1/get-offers', {}, connections);
      const bareRate = async () => {
        const r = await baseline!(Math.max(1, Math.round(seconds / 2)));
        return r.requests.total / r.duration;
      };
      await warmUp(load);
      const before = baseline && (await bareRate());
      const r = await load(seconds);
      const after = baseline && (await bareRate());
      return {
        rate: r['2xx'] / r.duration,
        unit: 'req/s',
        reqPerSec: r.requests.total / r.duration,
        p99Ms: r.latency.p99,
        errors: r.errors + r.timeouts + r.non2xx,
        ...(before && after
          ? {
              bareReqPerSec: (before + after) / 2,
              bareDrift: Math.abs(before - after) / ((before + after) / 2),
            }
          : {}),
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
    async run(target, seconds, connections) {
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
        p99Ms: latencies.length ? latencies[Math.floor(latencies.length * 0.99)]! : Number.NaN,
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
