import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { RCA_QUOTE, startHarness, type Harness } from '../support/harness.ts';

/** Third security round, the low findings (decisions 0083 to 0086), through the real service. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(async () => h?.close());

const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

describe('finding 5: a NUL nested 65 levels deep answers 500', () => {
  it('refuses NUL and lone surrogates at any depth with 400 naming the place', async () => {
    for (const [depth, inner] of [
      [65, '"\\u0000"'],
      [200, '"a\\ud800"'],
      [1000, '{"k\\u0000":1}'],
    ] as const) {
      const body = `{"product":"rca","vehicle":"100000001","duration":365,"idnx":"2003000000016","extra":${nested(depth, inner)}}`;
      const res = await h.call('get-offers', body);
      expect(res.status, `${depth}`).toBe(400);
      expect(res.body.message).toMatch(
        /^body\/extra(\/0)+.* must not contain U\+0000 or an unpaired surrogate$/,
      );
    }
  });

  it('walks a body of 30 000 nested arrays without overflowing', async () => {
    const body = `{"product":"rca","extra":${nested(30_000, '"\\u0000"')}}`;
    const res = await h.call('get-offers', body);
    expect(res.status).toBe(400);
    const clean = await h.call('get-offers', { ...RCA_QUOTE, extra: 'ok' });
    expect(clean.status).toBe(200);
  });
});

describe('finding 5: a captured timestamped request replayed inside its window uses up the rate limit', () => {
  it('counts replays of one signature apart from the partner’s own requests', async () => {
    const p = await h.newPartner();
    const set = await h.admin('PATCH', `/admin/partners/${p.id}`, { rate_limit_per_minute: 5 });
    expect(set.status).toBe(200);
    const payload = '{}';
    const captured = {
      'content-type': 'application/json',
      'x-polita-signature': timestampedSignatureHeader(p.id, p.secret, 'get-balance', payload),
    };
    const replay = () =>
      h.service.app.inject({ method: 'POST', url: '/v1/get-balance', headers: captured, payload });
    expect((await replay()).statusCode).toBe(200);
    const replays = [];
    for (let i = 0; i < 12; i++) replays.push((await replay()).statusCode);
    expect(replays.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(replays.slice(5).every((s) => s === 429)).toBe(true);
    // The partner's own requests: the first used one of its 5, four are left.
    const own = [];
    for (let i = 0; i < 5; i++) {
      // Each its own signature: a second apart, as a partner's requests are.
      const t = Math.floor(Date.now() / 1000) - 10 - i;
      const headers = {
        'content-type': 'application/json',
        'x-polita-signature': timestampedSignatureHeader(p.id, p.secret, 'get-balance', payload, t),
      };
      own.push(
        (await h.service.app.inject({ method: 'POST', url: '/v1/get-balance', headers, payload })).statusCode,
      );
    }
    expect(own).toEqual([200, 200, 200, 200, 429]);
  });
});
