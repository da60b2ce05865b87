import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { payment, rcaItem, startHarness, type Harness } from '../support/harness.ts';
import { guideExamples } from '../support/readme.ts';

/**
 * A seeded fuzz of every /v1 and /admin route (decisions 0001 and 0003): valid requests taken apart
 * and put back wrong — wrong types, huge and empty strings, control characters, NUL and lone surrogates, deep
 * nesting, huge arrays, extreme numbers, duplicate keys, broken JSON, wrong content types, odd path
 * parameters. No answer may be a 5xx, except the spec's product-rule rejections (500 "[API] …"),
 * and the service must still answer afterwards. FUZZ_SEED repeats a run; FUZZ_REQUESTS sizes it.
 */
const SEED = Number(process.env.FUZZ_SEED || 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS || 20_000);

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
/** Percent-encoding, with the bytes of a lone surrogate written as they would arrive on the wire. */
const enc = (v: unknown): string => {
  try {
    return encodeURIComponent(String(v));
  } catch {
    return '%ED%A0%80';
  }
};
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function nasty(r: Rand, depth = 0): unknown {
  const strings = [
    '',
    ' ',
    'a\u0000b',
    '\u0000',
    '\ud800',
    'x\udfffy',
    '\ud83d\ude97',
    'ăâîșț',
    '\u0001\u0002\u001f\u007f',
    '\r\n\t',
    "'; drop table orders; --",
    '%00',
    '../../etc/passwd',
    'x'.repeat(300),
    'y'.repeat(70_000),
    '2026-02-30',
    '9999-12-31',
    '0000-00-00',
    'IAI000000AAA',
    '100000001',
    'rca',
    'MDL',
    '\ufeff',
    '\u202e',
  ];
  const numbers = [
    0,
    -0,
    -1,
    1.5,
    1e308,
    -1e308,
    5e-324,
    2 ** 53,
    2 ** 63,
    -(2 ** 63),
    1e21,
    0.001,
    999_999_999,
  ];
  const kind = r();
  if (kind < 0.35) return pick(r, strings);
  if (kind < 0.6) return pick(r, numbers);
  if (kind < 0.68) return pick(r, [true, false, null]);
  if (kind < 0.76)
    return depth > 2 ? [] : Array.from({ length: pick(r, [0, 1, 3, 5000]) }, () => pick(r, numbers));
  if (kind < 0.84) return depth > 2 ? {} : { [pick(r, strings.slice(0, 12))]: nasty(r, depth + 1) };
  if (kind < 0.9) {
    let v: unknown = 1;
    for (let i = 0; i < pick(r, [10, 100, 1000]); i++) v = [v];
    return v;
  }
  return pick(r, [[], {}, [{}], [null]]);
}

/** A copy of `value` with one random place changed, removed or added. */
function mutate(r: Rand, value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 4 || r() < 0.25) return nasty(r);
  if (Array.isArray(value)) {
    if (value.length === 0 || r() < 0.15) return [...value, nasty(r)];
    const i = Math.floor(r() * value.length);
    const copy = [...value];
    if (r() < 0.2) copy.splice(i, 1);
    else copy[i] = mutate(r, copy[i], depth + 1);
    return copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  const roll = r();
  if (keys.length === 0 || roll < 0.1)
    copy[pick(r, ['extra', 'product', 'id', '__proto__', 'constructor'])] = nasty(r);
  else if (roll < 0.25) delete copy[pick(r, keys)];
  else {
    const k = pick(r, keys);
    copy[k] = mutate(r, copy[k], depth + 1);
  }
  return copy;
}

/** The JSON text of a mutated body, sometimes broken or with a duplicated key. */
function payloadOf(r: Rand, body: unknown): string {
  const text = JSON.stringify(body) ?? 'null';
  const roll = r();
  if (roll < 0.03) return text.slice(0, Math.floor(r() * text.length));
  if (roll < 0.06 && text.startsWith('{"')) {
    const key = /^\{"([^"]+)"/.exec(text)?.[1] ?? 'id';
    return `{"${key}":${JSON.stringify(nasty(r))},${text.slice(1)}`;
  }
  if (roll < 0.07) return '\u0000';
  return text;
}

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string | ((r: Rand) => string);
  seeds: unknown[];
  partner?: boolean;
}

let h: Harness;
let orderId = '';
/** The partner whose secret the fuzz rotates instead of the demo partner's, which signs its /v1 requests. */
let rotated = '';
beforeAll(async () => {
  // The fuzz is about answers, not limits: a limit would turn its later requests into 429s.
  h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000' } });
  await h.setClock('2026-11-21T10:00:00+02:00');
  const quote = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', {
    product: 'rca',
    vehicle: '100000001',
    duration: 365,
    idnx: '2003000000016',
  });
  const created = await h.call<{ id: string; price: number }>('create-order', {
    customer: { phone: '+37369123456', name: 'Ion Popescu' },
    products: [rcaItem(quote.body.offers[0]!.min_start_date)],
  });
  orderId = created.body.id;
  rotated = (await h.newPartner({ name: 'Fuzz rotations' })).id;
});
afterAll(() => h?.close());

describe(`a seeded fuzz of every /v1 and /admin route (seed ${SEED})`, () => {
  it(`answers ${REQUESTS} malformed requests without a 5xx, and still serves afterwards`, async () => {
    const r = mulberry32(SEED);
    const oddIds = (rr: Rand) =>
      enc(
        pick(rr, [
          orderId,
          'demo',
          'IAI000000AAA',
          '',
          'a'.repeat(500),
          '%00',
          '\u0000',
          'ăîș',
          '..',
          '%ED%A0%80',
        ]),
      ).replace('%2500', '%00');
    const createSeeds = guideExamples('create-order').map((l) => JSON.parse(l) as unknown);
    const routes: Route[] = [
      {
        method: 'POST',
        url: '/v1/get-offers',
        seeds: guideExamples('get-offers').map((l) => JSON.parse(l) as unknown),
        partner: true,
      },
      { method: 'POST', url: '/v1/create-order', seeds: createSeeds, partner: true },
      {
        method: 'POST',
        url: '/v1/confirm-order',
        seeds: [{ id: orderId, payment: payment(1234.5, { currency: 'MDL' }) }],
        partner: true,
      },
      { method: 'POST', url: '/v1/pay-order-from-balance', seeds: [{ id: orderId }], partner: true },
      { method: 'POST', url: '/v1/get-order', seeds: [{ id: orderId }], partner: true },
      { method: 'POST', url: '/v1/get-balance', seeds: [{}], partner: true },
      {
        method: 'POST',
        url: '/admin/partners',
        seeds: [{ name: 'Fuzz SRL', webhook_url: 'http://127.0.0.1:9/hook', wallet: true, margin_bp: 100 }],
      },
      { method: 'GET', url: (rr) => `/admin/partners/${oddIds(rr)}`, seeds: [undefined] },
      {
        method: 'PATCH',
        url: '/admin/partners/demo',
        seeds: [{ name: 'Demo Partner', disabled: false, margin_bp: 0 }],
      },
      // A second rotation retires the first secret (decision 0040): the demo partner keeps its own.
      {
        method: 'POST',
        url: (rr) => `/admin/partners/${oddIds(rr).replace(/^demo$/, rotated)}/secrets`,
        seeds: [undefined],
      },
      {
        method: 'POST',
        url: (rr) => `/admin/partners/${pick(rr, ['demo', oddIds(rr)])}/wallet/credits`,
        seeds: [{ wallet: 'promo', amount: 1.5, reference: 'fuzz' }],
      },
      { method: 'PUT', url: '/admin/settings', seeds: [{ balance_spending_enabled: true }] },
      {
        method: 'GET',
        url: (rr) =>
          `/admin/orders?limit=${enc(nasty(rr))}&status=${enc(nasty(rr))}&cursor=${enc(nasty(rr))}`,
        seeds: [undefined],
      },
      { method: 'GET', url: (rr) => `/admin/orders/${oddIds(rr)}`, seeds: [undefined] },
      { method: 'POST', url: (rr) => `/admin/orders/${oddIds(rr)}/refund`, seeds: [{ reason: 'fuzz' }] },
      { method: 'POST', url: (rr) => `/admin/orders/${oddIds(rr)}/webhook`, seeds: [undefined] },
      {
        method: 'GET',
        url: (rr) => `/admin/partners/${oddIds(rr)}/wallet/statement?from=${enc(nasty(rr))}&to=2026-11-30`,
        seeds: [undefined],
      },
      { method: 'PUT', url: '/admin/sandbox/clock', seeds: [{ now: '2026-11-21T10:00:00+02:00' }] },
    ];

    const unexpected: { route: string; payload: string; status: number; body: string }[] = [];
    const counts: Record<number, number> = {};
    for (let i = 0; i < REQUESTS; i++) {
      const route = routes[i % routes.length]!;
      const url = typeof route.url === 'string' ? route.url : route.url(r);
      const seed = pick(r, route.seeds);
      const body =
        seed === undefined ? (r() < 0.7 ? undefined : nasty(r)) : r() < 0.05 ? seed : mutate(r, seed);
      const payload = body === undefined ? undefined : payloadOf(r, body);
      const contentType = pick(r, [
        'application/json',
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        undefined,
      ]);
      const headers: Record<string, string> = {};
      if (contentType) headers['content-type'] = contentType;
      if (route.partner) {
        if (r() < 0.95)
          headers['x-polita-signature'] = timestampedSignatureHeader(
            h.demo.id,
            h.demo.secret,
            url.slice('/v1/'.length),
            payload ?? '',
          );
      } else if (r() < 0.97) headers.authorization = `Bearer ${h.adminToken}`;
      const res = await h.service.app.inject({
        method: route.method,
        url,
        headers,
        ...(payload !== undefined && route.method !== 'GET' ? { payload } : {}),
      });
      counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1;
      const isApiRule = res.statusCode === 500 && /"message":"\[API\] /.test(res.body);
      if (res.statusCode >= 500 && !isApiRule && unexpected.length < 20) {
        unexpected.push({
          route: `${route.method} ${url}`,
          payload: (payload ?? '').slice(0, 300),
          status: res.statusCode,
          body: res.body.slice(0, 300),
        });
      }
    }
    console.log(`fuzz seed ${SEED}: ${REQUESTS} requests, answers by status ${JSON.stringify(counts)}`);
    expect(unexpected, `FUZZ_SEED=${SEED} repeats this run`).toEqual([]);

    const after = await h.call('get-offers', {
      product: 'rca',
      vehicle: '100000001',
      duration: 365,
      idnx: '2003000000016',
    });
    expect(after.status).toBe(200);
    expect((await h.service.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 600_000);
});
