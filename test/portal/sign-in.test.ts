import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { tokenHash } from '../../src/secrets/secret-box.ts';
import { startService } from '../../src/service.ts';
import { startHarness, TEST_SECRET_KEY, type Harness } from '../support/harness.ts';
import { FORM, form, get, invite, PASSWORD, portalUser, post, signIn, type Signed } from './support.ts';

/**
 * Portal sign-in and sessions through the real service (inject): the cookie, what the table keeps,
 * one answer for a wrong password and an unknown email, the limits on failures per address and per
 * address and email (small here, through their settings), 12 h idle, sign-out, a disabled user or
 * partner, CSRF and what the pages send.
 */
const LIMITS = { PORTAL_SIGN_IN_FAILURES_PER_ADDRESS: '6', PORTAL_SIGN_IN_FAILURES_PER_EMAIL: '3' };
let h: Harness;
let owner: Signed;
beforeAll(async () => {
  h = await startHarness({ env: LIMITS });
  const p = await h.newPartner({ name: 'Agenția Nord' });
  owner = await portalUser(h, p.id, 'owner', 'ana@nord.example');
});
afterAll(async () => {
  await h?.close();
});

const alertOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const partnerOf = async (id: string) =>
  (await h.admin<{ active_secrets: number }>('GET', `/admin/partners/${id}`)).body;

describe('sign-in', () => {
  it('opens a session in an HttpOnly, SameSite=Strict cookie on /portal, keeping only its hash', async () => {
    const { res, cookie } = await signIn(h, 'ANA@nord.example', PASSWORD);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/portal/orders');
    const c = res.cookies.find((x) => x.name === 'polita_portal')!;
    expect(c).toMatchObject({ path: '/portal', httpOnly: true, sameSite: 'Strict' });
    expect(c.secure).toBeFalsy();
    expect(c.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await sql<{ id_sha256: string }>`select id_sha256 from portal_sessions`.execute(
      h.service.svc.db,
    );
    expect(rows.rows.some((r) => r.id_sha256 === c.value)).toBe(false);
    expect((await get(h, '/portal/orders', cookie)).statusCode).toBe(200);

    const https = await h.service.app.inject({
      method: 'POST',
      url: '/portal/sign-in',
      headers: { ...FORM, 'x-forwarded-proto': 'https' },
      payload: form({ email: 'ana@nord.example', password: PASSWORD }),
    });
    expect(https.cookies.find((x) => x.name === 'polita_portal')!.secure).toBe(true);
  });

  it('answers a wrong password, an unknown email and a user without a password alike: 401, same words', async () => {
    const p = await h.newPartner();
    await invite(h, p.id, 'pending@example.com', 'cashier');
    const answers = [];
    for (const [email, password, address] of [
      ['ana@nord.example', 'not the password at all', '10.1.0.1'],
      ['nobody@nord.example', PASSWORD, '10.1.0.2'],
      ['pending@example.com', PASSWORD, '10.1.0.3'],
    ] as const) {
      const { res, cookie } = await signIn(h, email, password, address);
      expect(res.statusCode).toBe(401);
      expect(cookie).toBe('');
      answers.push(alertOf(res.body));
    }
    expect(answers[0]).toBe('That email and password do not match an account: check both and try again.');
    expect(new Set(answers).size).toBe(1);
  });

  it('takes about as long for an unknown email as for a wrong password (a hash either way)', async () => {
    const time = async (email: string, address: string) => {
      const t = performance.now();
      await signIn(h, email, 'not the password at all', address);
      return performance.now() - t;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 2; i++) {
      known.push(await time('ana@nord.example', `10.2.${i}.1`));
      unknown.push(await time(`nobody${i}@nord.example`, `10.2.${i}.2`));
    }
    // Without the dummy hash an unknown email answers in a few milliseconds, a hash takes far longer.
    expect(Math.min(...unknown)).toBeGreaterThan(Math.min(...known) * 0.4);
  });

  it('has the documented limits by default', () => {
    const config = loadConfig({ SANDBOX: 'true' });
    expect([
      config.portalSignInFailuresPerAddress,
      config.portalSignInFailuresPerEmail,
      config.portalSignInWindowMinutes,
    ]).toEqual([20, 5, 15]);
    expect(() => loadConfig({ PORTAL_SIGN_IN_FAILURES_PER_EMAIL: '0' })).toThrow(
      'PORTAL_SIGN_IN_FAILURES_PER_EMAIL must be a whole number from 1 to 1000000, got "0"',
    );
  });
});

describe('the limits on failed sign-ins', () => {
  it('past the limit for an email, refuses that email from that address (429), even the right password; elsewhere it signs in', async () => {
    const p = await h.newPartner();
    const u = await portalUser(h, p.id, 'developer', 'dev@limits.example');
    for (let i = 0; i < 3; i++) {
      expect((await signIn(h, u.email, 'wrong password number', '10.3.0.1')).res.statusCode).toBe(401);
    }
    const limited = await signIn(h, u.email, PASSWORD, '10.3.0.1');
    expect(limited.res.statusCode).toBe(429);
    expect(Number(limited.res.headers['retry-after'])).toBeGreaterThan(14 * 60);
    expect(alertOf(limited.res.body)).toMatch(
      /^Too many failed sign-ins for this email from this address: try again in 1[45] min\.$/,
    );
    expect(limited.cookie).toBe('');
    // Another email from the same address is judged as usual; the user signs in from elsewhere.
    expect((await signIn(h, 'ana@nord.example', 'wrong password again', '10.3.0.1')).res.statusCode).toBe(
      401,
    );
    expect((await signIn(h, u.email, PASSWORD, '10.3.0.2')).res.statusCode).toBe(303);
  });

  it('past the limit for an address, refuses every email from it (429), and counts on every instance', async () => {
    for (let i = 0; i < 6; i++) {
      expect(
        (await signIn(h, `guess${i}@example.com`, 'wrong password number', '10.4.0.1')).res.statusCode,
      ).toBe(401);
    }
    expect((await signIn(h, 'ana@nord.example', PASSWORD, '10.4.0.1')).res.statusCode).toBe(429);
    expect((await signIn(h, 'ana@nord.example', PASSWORD, '10.4.0.2')).res.statusCode).toBe(303);

    // A second instance on the same database refuses the address too.
    const config = loadConfig({
      DATABASE_URL: h.databaseUrl,
      DATA_DIR: h.dataDir,
      SECRET_KEY: TEST_SECRET_KEY,
      SANDBOX: 'true',
      PUBLIC_BASE_URL: 'http://polita.test',
      ...LIMITS,
    });
    const other = await startService(config, { logger: createLogger('silent'), workers: false });
    try {
      const res = await other.app.inject({
        method: 'POST',
        url: '/portal/sign-in',
        headers: FORM,
        remoteAddress: '10.4.0.1',
        payload: form({ email: 'ana@nord.example', password: PASSWORD }),
      });
      expect(res.statusCode).toBe(429);
    } finally {
      await other.stop();
    }
  });

  it('forgets an address and email’s failures when that user signs in from it', async () => {
    const p = await h.newPartner();
    const u = await portalUser(h, p.id, 'cashier');
    for (let i = 0; i < 2; i++) await signIn(h, u.email, 'wrong password number', '10.5.0.1');
    expect((await signIn(h, u.email, PASSWORD, '10.5.0.1')).res.statusCode).toBe(303);
    for (let i = 0; i < 2; i++) {
      expect((await signIn(h, u.email, 'wrong password number', '10.5.0.1')).res.statusCode).toBe(401);
    }
  });
});

describe('sessions', () => {
  it('sends a visitor without a session to sign-in, and htmx by HX-Redirect; a POST is refused', async () => {
    for (const url of [
      '/portal',
      '/portal/orders',
      '/portal/team',
      '/portal/orders/IAI000000AAA',
      '/portal/nowhere',
    ]) {
      const res = await get(h, url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location).toBe('/portal/sign-in');
    }
    const hx = await get(h, '/portal/orders', '', { 'hx-request': 'true' });
    expect(hx.statusCode).toBe(204);
    expect(hx.headers['hx-redirect']).toBe('/portal/sign-in');
    const res = await post(h, '/portal/developers/secrets', '', { _csrf: 'x' });
    expect(res.statusCode).toBe(403);
    expect(alertOf(res.body)).toBe('Your session has ended: sign in again, then repeat what you were doing.');
  });

  it('ends after 12 hours without a request', async () => {
    const { cookie } = await signIn(h, 'ana@nord.example', PASSWORD, '10.6.0.1');
    const id = tokenHash(cookie.split('=')[1]!);
    await sql`update portal_sessions set last_seen_at = now() - interval '12 hours 1 minute'
              where id_sha256 = ${id}`.execute(h.service.svc.db);
    expect((await get(h, '/portal/orders', cookie)).headers.location).toBe('/portal/sign-in');
  });

  it('ends at sign-out, in the audit log with the user and the partner', async () => {
    const { cookie } = await signIn(h, 'ana@nord.example', PASSWORD, '10.6.0.2');
    const res = await post(h, '/portal/sign-out', cookie);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/portal/sign-in?done=signed-out');
    expect((await get(h, '/portal/orders', cookie)).headers.location).toBe('/portal/sign-in');
    const audit = await h.admin<{ entries: Record<string, unknown>[] }>(
      'GET',
      `/admin/audit?actor=${encodeURIComponent(`portal:${owner.partnerId}:ana@nord.example`)}`,
    );
    expect(audit.body.entries.slice(0, 2)).toMatchObject([
      { action: 'portal.sign_out', via: 'portal', role: 'owner', target: owner.partnerId },
      { action: 'portal.sign_in', via: 'portal', role: 'owner', target: owner.partnerId },
    ]);
  });

  it('ends at once when the user is disabled, and the user can no longer sign in', async () => {
    const dev = await portalUser(h, owner.partnerId, 'developer');
    expect((await get(h, '/portal/developers', dev.cookie)).statusCode).toBe(200);
    const res = await post(h, `/portal/team/users/${dev.userId}/disable`, owner.cookie);
    expect(res.statusCode).toBe(303);
    expect((await get(h, '/portal/developers', dev.cookie)).headers.location).toBe('/portal/sign-in');
    const again = await signIn(h, dev.email, PASSWORD, '10.6.0.3');
    expect(again.res.statusCode).toBe(403);
    expect(alertOf(again.res.body)).toBe('Your user is disabled: ask an owner of your account.');
  });

  it('ends at once when the partner is disabled', async () => {
    const p = await h.newPartner();
    const u = await portalUser(h, p.id, 'owner');
    expect((await h.admin('PATCH', `/admin/partners/${p.id}`, { disabled: true })).status).toBe(200);
    expect((await get(h, '/portal/orders', u.cookie)).headers.location).toBe('/portal/sign-in');
    const again = await signIn(h, u.email, PASSWORD, '10.6.0.4');
    expect(again.res.statusCode).toBe(403);
    expect(alertOf(again.res.body)).toBe(
      'Your partner account is disabled: ask the operator of the service.',
    );
  });
});

describe('forged requests and what the pages send', () => {
  it('refuses a POST without the session’s CSRF token, with another session’s, or from another site (403), changing nothing', async () => {
    const other = await signIn(h, 'ana@nord.example', PASSWORD, '10.7.0.1');
    const before = (await partnerOf(owner.partnerId)).active_secrets;
    const theirs = (await get(h, '/portal/orders', other.cookie)).body.match(
      /name="_csrf" value="([^"]+)"/,
    )![1]!;
    const cases: [Record<string, string>, Record<string, string>][] = [
      [{ _csrf: '' }, {}],
      [{ _csrf: 'forged' }, {}],
      [{ _csrf: theirs.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) }, {}],
    ];
    for (const [fields, headers] of cases) {
      const res = await post(h, '/portal/developers/secrets', owner.cookie, fields, headers);
      expect(res.statusCode, JSON.stringify(fields)).toBe(403);
      expect(res.body).toContain('CSRF');
    }
    // Another session's token does not open this one.
    const crossSession = await post(h, '/portal/developers/secrets', owner.cookie, { _csrf: theirs });
    expect(crossSession.statusCode).toBe(403);
    // From another site even the right token is refused.
    const cross = await post(
      h,
      '/portal/developers/secrets',
      owner.cookie,
      {},
      { origin: 'https://evil.example' },
    );
    expect(cross.statusCode).toBe(403);
    expect(alertOf(cross.body)).toBe('This request came from another site: the portal refuses it.');
    const signInCross = await h.service.app.inject({
      method: 'POST',
      url: '/portal/sign-in',
      headers: { ...FORM, origin: 'https://evil.example' },
      payload: form({ email: 'ana@nord.example', password: PASSWORD }),
    });
    expect(signInCross.statusCode).toBe(403);
    expect((await partnerOf(owner.partnerId)).active_secrets).toBe(before);
    // The header htmx sends works as the field does.
    const token = (await get(h, '/portal/orders', owner.cookie)).body.match(
      /name="_csrf" value="([^"]+)"/,
    )![1]!;
    const viaHeader = await h.service.app.inject({
      method: 'POST',
      url: '/portal/developers/secrets',
      headers: { ...FORM, cookie: owner.cookie, 'x-csrf-token': token },
      payload: '',
    });
    expect(viaHeader.statusCode).toBe(201);
  });

  it('sends the security headers, keeps pages out of caches, and looks nothing up on a prototype', async () => {
    const page = await get(h, '/portal/orders', owner.cookie);
    expect(page.headers).toMatchObject({
      'content-security-policy': expect.stringContaining("default-src 'none'"),
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    });
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    for (const file of ['portal.css', 'console.css', 'htmx.min.js']) {
      const res = await get(h, `/portal/static/${file}`);
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['cache-control'], file).toContain('max-age=3600');
    }
    for (const name of ['__proto__', 'constructor', 'toString', '..%2Fviews%2Flayout.eta']) {
      expect((await get(h, `/portal/static/${name}`)).statusCode, name).toBe(404);
    }
    const done = await get(h, '/portal/orders?done=constructor', owner.cookie);
    expect(done.statusCode).toBe(200);
    expect(done.body).not.toContain('role="status"');
    expect(done.body).not.toContain('native code');
  });

  it('refuses text that cannot be stored (400) before anything runs', async () => {
    const res = await post(h, '/portal/team/users', owner.cookie, {
      email: 'a\u0000b@example.com',
      role: 'owner',
    });
    expect(res.statusCode).toBe(400);
  });
});
