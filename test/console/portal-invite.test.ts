import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../src/app/admin/operators.ts';
import { consoleCookie, signedInConsole } from '../support/console.ts';
import type { Harness } from '../support/harness.ts';

/** The operator invites a partner's first portal owner from the console: the link is shown once. */
let h: Harness;
let cookie: string;
beforeAll(async () => ({ h, cookie } = await signedInConsole()));
afterAll(() => h?.close());

/** The partner page's CSRF token and the cookies that go with it. */
async function partnerPage(as: string, id: string) {
  const page = await h.service.app.inject({
    method: 'GET',
    url: `/console/partners/${id}`,
    headers: { cookie: as },
  });
  expect(page.statusCode).toBe(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const cookies = [as, ...page.cookies.map((c) => `${c.name}=${c.value}`)].join('; ');
  return { body: page.body, csrf, cookies };
}

const invite = (as: { csrf: string; cookies: string }, id: string, form: Record<string, string>) =>
  h.service.app.inject({
    method: 'POST',
    url: `/console/partners/${id}/users`,
    headers: {
      cookie: as.cookies,
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://polita.test',
    },
    payload: new URLSearchParams({ _csrf: as.csrf, ...form }).toString(),
  });

describe('the console’s portal invitation', () => {
  it('shows the partner page’s Invite form, labelled', async () => {
    const { body } = await partnerPage(cookie, h.demo.id);
    expect(body).toContain('<label for="invite_email">Email</label>');
    expect(body).toContain('<label for="invite_role">Role</label>');
    expect(body).toMatch(/<button type="submit">Invite<\/button>/);
  });

  it('invites an owner: the link is on the answer once, opens the portal’s set-password page, and is audited', async () => {
    const page = await partnerPage(cookie, h.demo.id);
    const res = await invite(page, h.demo.id, { email: 'first.owner@agent.example', role: 'owner' });
    expect(res.statusCode, res.body).toBe(201);
    const url = /<code id="invitation-url" class="secret">([^<]+)<\/code>/.exec(res.body)?.[1];
    expect(url).toMatch(/^http:\/\/polita\.test\/portal\//);
    const link = await h.service.app.inject({
      method: 'GET',
      url: new URL(url!).pathname,
      headers: { 'accept-language': 'en' },
    });
    expect(link.statusCode).toBe(200);
    expect(link.body).toContain('Set password');
    const audit = await h.admin<{ entries: { action: string; via: string; after: unknown }[] }>(
      'GET',
      `/admin/audit?target=${h.demo.id}`,
    );
    const entry = audit.body.entries.find((e) => e.via === 'console' && /invite/.test(e.action));
    expect(entry, JSON.stringify(audit.body.entries)).toBeDefined();
    expect(JSON.stringify(audit.body)).not.toContain(new URL(url!).pathname.split('/').pop()!);
  });

  it('refuses an address that is not one, on the partner page, keeping what was typed', async () => {
    const page = await partnerPage(cookie, h.demo.id);
    const res = await invite(page, h.demo.id, { email: 'not-an-address', role: 'owner' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('email must be an address like name@example.com');
    expect(res.body).toContain('value="not-an-address"');
  });

  it('refuses the support role', async () => {
    const { token } = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Sandu', role: 'support' });
    const support = await partnerPage(await consoleCookie(h, token), h.demo.id);
    const res = await invite(support, h.demo.id, { email: 'someone@agent.example', role: 'cashier' });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('The support role cannot invite portal users');
  });
});

describe('the console’s set-password link (a forgotten password)', () => {
  const reset = (as: { csrf: string; cookies: string }, id: string, email: string) =>
    h.service.app.inject({
      method: 'POST',
      url: `/console/partners/${id}/users/password-link`,
      headers: {
        cookie: as.cookies,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://polita.test',
      },
      payload: new URLSearchParams({ _csrf: as.csrf, email }).toString(),
    });

  it('shows a new link for the partner’s user once, opening the set-password page, audited from the console', async () => {
    const p = await h.newPartner();
    const invited = await h.admin<{ id: string }>('POST', `/admin/partners/${p.id}/users`, {
      email: 'forgot@agent.example',
      role: 'cashier',
    });
    expect(invited.status).toBe(201);
    const page = await partnerPage(cookie, p.id);
    expect(page.body).toContain(`<label for="reset_email">User's email</label>`);
    const res = await reset(page, p.id, 'Forgot@Agent.example');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.body).toContain('A new set-password link for');
    const url = /<code id="invitation-url" class="secret">([^<]+)<\/code>/.exec(res.body)?.[1];
    const link = await h.service.app.inject({
      method: 'GET',
      url: new URL(url!).pathname,
      headers: { 'accept-language': 'en' },
    });
    expect(link.statusCode).toBe(200);
    expect(link.body).toContain('Set password');
    const audit = await h.admin<{ entries: { action: string; via: string }[] }>(
      'GET',
      `/admin/audit?target=${p.id}`,
    );
    expect(audit.body.entries[0]).toMatchObject({ action: 'partner.password_link', via: 'console' });
  });

  it('answers an unknown email on the partner page, keeping what was typed, and refuses support', async () => {
    const page = await partnerPage(cookie, h.demo.id);
    const res = await reset(page, h.demo.id, 'nobody@agent.example');
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('User not found, or disabled');
    expect(res.body).toContain('value="nobody@agent.example"');
    const { token } = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Ion', role: 'support' });
    const support = await partnerPage(await consoleCookie(h, token), h.demo.id);
    const refused = await reset(support, h.demo.id, 'nobody@agent.example');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('The support role cannot send set-password links');
  });
});
