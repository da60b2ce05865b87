import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { FORM, form, get, PASSWORD, portalUser, post, sessionCookie, type Signed } from './support.ts';

/**
 * Team in the portal (owners): the partner's users, `Invite user` with the link shown once, and
 * `Disable`; another partner's user is 404, and other roles are refused.
 */
let h: Harness;
let owner: Signed;
beforeAll(async () => {
  h = await startHarness();
  const p = await h.newPartner({ name: 'Agenția Nord' });
  owner = await portalUser(h, p.id, 'owner', 'ana@nord.example');
});
afterAll(async () => {
  await h?.close();
});

const alertOf = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1];
const userCount = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from portal_users`.execute(h.service.svc.db)).rows[0]!
    .n;

describe('Invite user', () => {
  it('invites with a role, shows the link once, and the invited person joins the team', async () => {
    const res = await post(h, '/portal/team/users', owner.cookie, {
      email: 'ion@nord.example',
      role: 'accountant',
    });
    expect(res.statusCode).toBe(201);
    const link = /<code id="invitation-url" class="secret">([^<]+)<\/code>/.exec(res.body)![1]!;
    expect(link).toMatch(/^http:\/\/polita\.test\/portal\/invitations\/[\w-]{43}$/);
    const team = await get(h, '/portal/team', owner.cookie);
    expect(team.body).toContain('ion@nord.example');
    expect(team.body).toMatch(/<td>invited until \d\d\/\d\d\/\d{4}/);
    expect(team.body).not.toContain(link);

    const accepted = await h.service.app.inject({
      method: 'POST',
      url: new URL(link).pathname,
      headers: FORM,
      payload: form({ password: PASSWORD }),
    });
    expect(accepted.statusCode).toBe(303);
    expect((await get(h, '/portal/wallet', sessionCookie(accepted))).statusCode).toBe(200);
    expect((await get(h, '/portal/team', owner.cookie)).body).toContain('<td>active</td>');

    const audit = await h.admin<{ entries: Record<string, unknown>[] }>(
      'GET',
      `/admin/audit?target=${owner.partnerId}`,
    );
    const invited = audit.body.entries.find((e) => e.action === 'partner.invite_user')!;
    expect(invited).toMatchObject({
      actor: `portal:${owner.partnerId}:ana@nord.example`,
      role: 'owner',
      via: 'portal',
    });
    expect(JSON.stringify(audit.body)).not.toContain(link.split('/').pop());
  });

  it('refuses a bad address, an unknown role and an address in use beside the form, changing nothing', async () => {
    const before = await userCount();
    for (const [fields, status, reason] of [
      [{ email: 'nope', role: 'cashier' }, 400, 'Enter an email address like name@example.com.'],
      [{ email: 'x@nord.example', role: 'boss' }, 400, 'Choose a role from the list.'],
      // A colleague who joined already (another partner's user is invited as anyone: decision 0086).
      [
        { email: owner.email.toUpperCase(), role: 'cashier' },
        409,
        `A portal user with the email ${owner.email.toUpperCase()} exists already`,
      ],
    ] as const) {
      const res = await post(h, '/portal/team/users', owner.cookie, fields);
      expect(res.statusCode, JSON.stringify(fields)).toBe(status);
      expect(res.body).toContain(`<p id="invite-error" class="error" role="alert">${reason}</p>`);
      expect(res.body).toContain(`value="${fields.email}"`);
    }
    expect(await userCount()).toBe(before);
  });
});

describe('Disable', () => {
  it('disables a user of the partner; not oneself, and another partner’s user is 404', async () => {
    const cashier = await portalUser(h, owner.partnerId, 'cashier');
    const res = await post(h, `/portal/team/users/${cashier.userId}/disable`, owner.cookie);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/portal/team?done=disabled');
    const team = await get(h, '/portal/team?done=disabled', owner.cookie);
    expect(team.body).toContain('The user is disabled, and signed out everywhere.');
    expect(team.body).toContain('<td>disabled</td>');
    expect((await get(h, '/portal/orders', cashier.cookie)).headers.location).toBe('/portal/sign-in');
    expect((await post(h, `/portal/team/users/${cashier.userId}/disable`, owner.cookie)).statusCode).toBe(
      404,
    );

    const self = await post(h, `/portal/team/users/${owner.userId}/disable`, owner.cookie);
    expect(self.statusCode).toBe(400);
    expect(alertOf(self.body)).toBe('You cannot disable yourself: ask another owner, or the operator.');

    const other = await h.newPartner();
    const theirs = await portalUser(h, other.id, 'cashier');
    const foreign = await post(h, `/portal/team/users/${theirs.userId}/disable`, owner.cookie);
    expect(foreign.statusCode).toBe(404);
    expect((await get(h, '/portal/orders', theirs.cookie)).statusCode).toBe(200);
    expect((await get(h, '/portal/team', owner.cookie)).body).not.toContain(theirs.email);
  });

  it('refuses Team to the other roles (403)', async () => {
    for (const role of ['developer', 'cashier', 'accountant']) {
      const u = await portalUser(h, owner.partnerId, role);
      expect((await get(h, '/portal/team', u.cookie)).statusCode).toBe(403);
      expect(
        (await post(h, '/portal/team/users', u.cookie, { email: `${role}@x.example`, role: 'owner' }))
          .statusCode,
      ).toBe(403);
    }
  });
});
