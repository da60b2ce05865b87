import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { RCA_QUOTE, startHarness, type Harness } from '../support/harness.ts';
import {
  FORM,
  form,
  get,
  invite,
  PASSWORD,
  portalUser,
  post,
  signIn,
  type Signed,
} from '../portal/support.ts';

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

describe('finding 5: an owner can learn whether an email is registered anywhere and claim it for good', () => {
  const teamInvite = async (owner: Signed, email: string) => {
    const res = await post(h, '/portal/team/users', owner.cookie, { email, role: 'cashier' });
    const link = /\/portal\/invitations\/[A-Za-z0-9_-]{43}/.exec(res.body)?.[0];
    return {
      status: res.statusCode,
      link,
      page: res.body.replaceAll(email, '<email>').replace(/[A-Za-z0-9_-]{43}/g, '<token>'),
    };
  };

  it('inviting another partner’s user answers as a new address, and that link opens nothing', async () => {
    const a = await h.newPartner();
    const taken = await portalUser(h, a.id, 'owner', 'held@a.example');
    // Two partners alike, one inviting an unknown address, the other one in use at A.
    const answer = async (email: string) => {
      const b = await h.newPartner();
      const ownerB = await portalUser(h, b.id, 'owner', `owner@${b.id}.example`);
      const r = await teamInvite(ownerB, email);
      return {
        ...r,
        page: r.page
          .replaceAll(ownerB.email, '<owner>')
          .replaceAll(ownerB.userId, '<owner id>')
          .replace(/usr_[0-9a-f]+/g, '<id>')
          .replace(/name="_csrf" value="[^"]+"/g, '')
          .replace(/X-CSRF-Token&quot;:&quot;[^&]+&quot;/g, '')
          .replace(/\d{2}:\d{2}/g, '<time>'),
      };
    };
    const fresh = await answer('nobody-yet@b.example');
    const held = await answer('held@a.example');
    expect(held.status).toBe(fresh.status);
    expect(held.page).toBe(fresh.page);
    expect((await get(h, held.link!)).statusCode).toBe(404);
    const accepted = await h.service.app.inject({
      method: 'POST',
      url: held.link!,
      headers: FORM,
      payload: form({ password: 'river-blue-cactus-9 lamp' }),
    });
    expect(accepted.statusCode).toBe(404);
    // The address stays its holder's.
    expect((await signIn(h, 'held@a.example', PASSWORD)).res.statusCode).toBe(303);
    expect((await get(h, '/portal/orders', taken.cookie)).statusCode).toBe(200);
  });

  it('an invitation not accepted does not keep the address from another partner', async () => {
    const a = await h.newPartner();
    await invite(h, a.id, 'unclaimed@example.com', 'owner');
    const b = await h.newPartner();
    const joined = await portalUser(h, b.id, 'developer', 'unclaimed@example.com');
    expect(joined.cookie).not.toBe('');
  });

  it('the operator can invite again the address of a disabled user', async () => {
    const p = await h.newPartner();
    const owner = await portalUser(h, p.id, 'owner', 'boss@again.example');
    const user = await portalUser(h, p.id, 'cashier', 'left@again.example');
    expect((await post(h, `/portal/team/users/${user.userId}/disable`, owner.cookie)).statusCode).toBe(303);
    // An owner cannot bring a disabled colleague back by inviting the address again...
    expect(
      (await post(h, '/portal/team/users', owner.cookie, { email: 'left@again.example', role: 'cashier' }))
        .statusCode,
    ).toBe(409);
    // ...the operator can: a new link, and the old password no longer works.
    const { path } = await invite(h, p.id, 'left@again.example', 'accountant');
    const res = await h.service.app.inject({
      method: 'POST',
      url: path,
      headers: FORM,
      payload: form({ password: 'river-blue-cactus-9 lamp' }),
    });
    expect(res.statusCode).toBe(303);
    expect((await signIn(h, 'left@again.example', PASSWORD, '10.86.0.1')).res.statusCode).toBe(401);
    expect(
      (await signIn(h, 'left@again.example', 'river-blue-cactus-9 lamp', '10.86.0.1')).res.statusCode,
    ).toBe(303);
  });
});
