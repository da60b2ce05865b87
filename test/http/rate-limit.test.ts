import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SharedWindowCounter } from '../../src/app/rate-limit-store.ts';
import { loadConfig } from '../../src/config.ts';
import { startService, type Service } from '../../src/service.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { testDatabaseUrl } from '../support/database.ts';
import type { Creds } from '../support/harness.ts';

/**
 * Rate limits (decision 0008): per partner on /v1, counted across every instance on one database;
 * per client address for failed authentications. Two service instances share one database here.
 */
let db: Awaited<ReturnType<typeof testDatabaseUrl>>;
let a: Service;
let b: Service;
beforeAll(async () => {
  db = await testDatabaseUrl();
  const config = loadConfig({
    DATABASE_URL: db.url,
    SANDBOX: 'true',
    LOG_LEVEL: 'silent',
    AUTH_FAILURES_PER_MINUTE: '3',
    ADMIN_TOKEN: 'rate-limit-test-admin-token',
  });
  const logger = pino({ level: 'silent' });
  [a, b] = [await startService(config, { logger }), await startService(config, { logger })];
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

/**
 * A `t` a second earlier at each call (from 200 s ahead, within the window while the file runs):
 * every request signed anew, as a partner's are (a signature seen again is a replay, counted apart:
 * decision 0086).
 */
const base = Math.floor(Date.now() / 1000) + 200;
let tick = 0;
const freshT = () => base - tick++;

const call = (s: Service, creds: Creds, opts: { address?: string; badSignature?: boolean } = {}) =>
  s.app.inject({
    method: 'POST',
    url: '/v1/get-balance',
    remoteAddress: opts.address ?? '127.0.0.1',
    headers: {
      'content-type': 'application/json',
      ...(opts.badSignature
        ? { 'x-hmac-signature': `${creds.id}:${'0'.repeat(128)}` }
        : {
            'x-polita-signature': timestampedSignatureHeader(
              creds.id,
              creds.secret,
              'get-balance',
              '{}',
              freshT(),
            ),
          }),
    },
    payload: '{}',
  });
const admin = (s: Service, method: 'POST' | 'PATCH' | 'GET', url: string, body?: unknown) =>
  s.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${s.adminToken}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
const newPartner = async (limit?: number | null): Promise<Creds> => {
  const res = await admin(a, 'POST', '/admin/partners', {
    name: 'Limited SRL',
    ...(limit !== undefined ? { rate_limit_per_minute: limit } : {}),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Counts live in whole-minute windows: a test that ran across a minute's end would see them restart. */
beforeEach(async () => {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await sleep(left + 100);
});

describe('the per-partner rate limit', () => {
  it('answers 429 with Retry-After and the JSON error shape past the partner’s limit, across instances', async () => {
    const p = await newPartner(6);
    // Each instance adds its counts to the shared row a quarter of a second after counting, and
    // reads back what every instance added: after that, each judges on the total. The test waits
    // for the shared row (a loaded machine can delay a flush) and a moment for the read-back.
    const shared = async (n: number) => {
      for (let i = 0; i < 100; i++) {
        const { rows } = await sql<{ count: number }>`
          select count from rate_limit_counters where key = ${`partner:${p.id}`}`.execute(a.svc.db);
        if (rows[0]?.count === n) return sleep(100);
        await sleep(50);
      }
      throw new Error(`the shared count never reached ${n}`);
    };
    for (let i = 0; i < 3; i++) {
      const served = await call(a, p);
      expect(served.statusCode).toBe(200);
      expect(served.headers['x-ratelimit-limit']).toBeUndefined();
    }
    await shared(3);
    expect((await call(b, p)).statusCode).toBe(200);
    await shared(4);
    for (let i = 0; i < 2; i++) expect((await call(b, p)).statusCode).toBe(200);
    const refused = await call(b, p);
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The limit's headers come with the refusal only (an answer within the limit carries none).
    expect(refused.headers['x-ratelimit-limit']).toBe('6');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(retryAfter));
    expect(refused.json()).toEqual({
      statusCode: 429,
      error: expect.stringMatching(/^Rate limit exceeded: 6 requests a minute; retry after \d+ s$/),
      message: expect.stringMatching(/^Rate limit exceeded: 6 requests a minute; retry after \d+ s$/),
    });
    await shared(7);
    expect((await call(a, p)).statusCode).toBe(200); // a's own view: 3 counted, 1 new
    await shared(8);
    expect((await call(a, p)).statusCode).toBe(429); // its flush read back every instance's count
    // Another partner is not touched.
    const other = await newPartner();
    expect((await call(a, other)).statusCode).toBe(200);
  });

  it('counts only correctly signed requests, and refuses past the limit before reading the body', async () => {
    const p = await newPartner(2);
    // Failed signatures (fewer than the address's AUTH_FAILURES_PER_MINUTE) are not the partner's.
    const address = '203.0.113.20';
    for (let i = 0; i < 2; i++)
      expect((await call(a, p, { address, badSignature: true })).statusCode).toBe(403);
    for (let i = 0; i < 2; i++) expect((await call(a, p, { address })).statusCode).toBe(200);
    const invalid = await a.app.inject({
      method: 'POST',
      url: '/v1/get-order',
      remoteAddress: address,
      headers: {
        'content-type': 'application/json',
        'x-polita-signature': timestampedSignatureHeader(p.id, p.secret, 'get-order', '{"id":5}'),
      },
      payload: '{"id":5}',
    });
    expect(invalid.statusCode).toBe(429);
    expect(invalid.json().message).toMatch(/^Rate limit exceeded: 2 requests a minute; retry after \d+ s$/);
  });

  it('is RATE_LIMIT_PER_MINUTE (6000) unless set, shown and changed by the operator', async () => {
    const p = await newPartner();
    expect((await admin(a, 'GET', `/admin/partners/${p.id}`)).json().rate_limit_per_minute).toBe(6000);
    const changed = await admin(a, 'PATCH', `/admin/partners/${p.id}`, { rate_limit_per_minute: 2 });
    expect(changed.json().rate_limit_per_minute).toBe(2);
    const back = await admin(a, 'PATCH', `/admin/partners/${p.id}`, { rate_limit_per_minute: null });
    expect(back.json().rate_limit_per_minute).toBe(6000);
    const wrong = await admin(a, 'PATCH', `/admin/partners/${p.id}`, { rate_limit_per_minute: 0 });
    expect(wrong.statusCode).toBe(400);
  });
});

describe('failed authentications', () => {
  it('from one address past AUTH_FAILURES_PER_MINUTE answer 429 to failing requests from it, for the minute', async () => {
    const p = await newPartner();
    const address = '203.0.113.7';
    for (let i = 0; i < 3; i++)
      expect((await call(a, p, { address, badSignature: true })).statusCode).toBe(403);
    // A correctly signed request from the same address is served all the same (decision 0046).
    expect((await call(a, p, { address })).statusCode).toBe(200);
    const refused = await call(a, p, { address, badSignature: true });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json().message).toMatch(
      /^Too many failed authentications from this address; retry after \d+ s$/,
    );
    // Another address with the same partner is served.
    expect((await call(a, p, { address: '203.0.113.8' })).statusCode).toBe(200);
  });
});

describe('the shared counter', () => {
  it('adds up what every instance counted, and starts again in the next window', async () => {
    let now = Date.UTC(2026, 10, 22, 12, 0, 10);
    const clock = () => now;
    const one = new SharedWindowCounter(a.svc.db, { now: clock, flushMs: 1_000_000 });
    const two = new SharedWindowCounter(a.svc.db, { now: clock, flushMs: 1_000_000 });
    const count = (c: SharedWindowCounter) => c.incr('k', 60_000).current;
    expect([count(one), count(one), count(two)]).toEqual([1, 2, 1]);
    await one.flush();
    await two.flush();
    // Two learned of one's 2 when it added its own; one learns of two's when it next adds.
    expect(count(two)).toBe(4);
    expect(count(one)).toBe(3);
    await one.flush();
    expect(count(one)).toBe(5); // 2 + 1 + 1 shared, and this one
    now += 60_000;
    expect(count(two)).toBe(1);
  });
});
