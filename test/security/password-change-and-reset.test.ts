import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { FORM, form, get, PASSWORD, portalUser, post, signIn } from '../portal/support.ts';

/**
 * Third security round, finding 6 (decision 0086): no way to change or reset a portal password.
 * `Change password` for oneself, and a new set-password link from an owner or the operator.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(async () => h?.close());

const NEW = 'river-blue-cactus-9 lamp';
const alertOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe('finding 6: no way to change or reset a portal password', () => {
  it('Change password needs the current one, judges the new one, and ends the other sessions', async () => {
    const p = await h.newPartner();
    const me = await portalUser(h, p.id, 'cashier', 'changer@example.com');
    const elsewhere = (await signIn(h, me.email, PASSWORD, '10.86.1.2')).cookie;
    expect((await get(h, '/portal/account', me.cookie)).body).toContain('Current password');

    const wrong = await post(h, '/portal/account/password', me.cookie, {
      current: 'not it at all 99',
      password: NEW,
    });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The current password is not right.');
    const weak = await post(h, '/portal/account/password', me.cookie, {
      current: PASSWORD,
      password: 'password1234',
    });
    expect(weak.statusCode).toBe(400);
    expect(alertOf(weak.body)).toContain('would be guessed too easily');

    const done = await post(h, '/portal/account/password', me.cookie, { current: PASSWORD, password: NEW });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/portal/account?done=password-changed');
    expect((await get(h, '/portal/orders', me.cookie)).statusCode).toBe(200);
    expect((await get(h, '/portal/orders', elsewhere)).headers.location).toBe('/portal/sign-in');
    expect((await signIn(h, me.email, PASSWORD, '10.86.1.3')).res.statusCode).toBe(401);
    expect((await signIn(h, me.email, NEW, '10.86.1.3')).res.statusCode).toBe(303);
  });

  it('an owner sends a new set-password link; the old password works until it is used', async () => {
    const p = await h.newPartner();
    const owner = await portalUser(h, p.id, 'owner', 'boss@reset.example');
    const cashier = await portalUser(h, p.id, 'cashier', 'forgot@reset.example');
    const res = await post(h, `/portal/team/users/${cashier.userId}/password-link`, owner.cookie);
    expect(res.statusCode).toBe(201);
    const link = /\/portal\/invitations\/[A-Za-z0-9_-]{43}/.exec(res.body)![0];
    expect((await signIn(h, cashier.email, PASSWORD, '10.86.2.1')).res.statusCode).toBe(303);
    const used = await h.service.app.inject({
      method: 'POST',
      url: link,
      headers: FORM,
      payload: form({ password: NEW }),
    });
    expect(used.statusCode).toBe(303);
    expect((await get(h, '/portal/orders', cashier.cookie)).headers.location).toBe('/portal/sign-in');
    expect((await signIn(h, cashier.email, PASSWORD, '10.86.2.2')).res.statusCode).toBe(401);
    const again = await signIn(h, cashier.email, NEW, '10.86.2.2');
    expect(again.res.statusCode).toBe(303);
    // Another partner's user: 404, as for one that does not exist.
    const q = await h.newPartner();
    const theirs = await portalUser(h, q.id, 'cashier');
    expect(
      (await post(h, `/portal/team/users/${theirs.userId}/password-link`, owner.cookie)).statusCode,
    ).toBe(404);
    // Only owners: a cashier has no Team.
    expect((await post(h, `/portal/team/users/${owner.userId}/password-link`, again.cookie)).statusCode).toBe(
      403,
    );
  });

  it('the operator sends one through /admin', async () => {
    const p = await h.newPartner();
    const user = await portalUser(h, p.id, 'developer', 'dev@reset.example');
    const res = await h.admin<{ invitation_url: string; email: string }>(
      'POST',
      `/admin/partners/${p.id}/users/${user.userId}/password-link`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.email).toBe('dev@reset.example');
    const used = await h.service.app.inject({
      method: 'POST',
      url: new URL(res.body.invitation_url).pathname,
      headers: FORM,
      payload: form({ password: NEW }),
    });
    expect(used.statusCode).toBe(303);
    expect(
      (await h.admin('POST', `/admin/partners/${p.id}/users/usr_000000000000/password-link`)).status,
    ).toBe(404);
  });
});
