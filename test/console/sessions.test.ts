import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator, disableOperator, rotateOperatorToken } from '../../src/app/admin/operators.ts';
import { localDate } from '../../src/domain/time.ts';
import { rcaItem, startHarness, type Harness } from '../support/harness.ts';

/**
 * The console's sessions and safety through the real service (inject): the cookie's attributes, what
 * the table keeps, 12 h idle, sign-out, a disabled operator, CSRF, and what the pages send.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * Signs in as a browser does: the sign-in POST, then the page it leads to, which sets the CSRF
 * cookie. `header` carries both cookies; `csrfCookie` (one browser, a second session) is sent
 * instead of a new one.
 */
async function signIn(token: string, headers: Record<string, string> = {}, csrfCookie?: string) {
  const res = await h.service.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { ...FORM, ...headers },
    payload: form({ token }),
  });
  const cookie = res.cookies.find((c) => c.name === 'polita_console');
  if (!cookie) return { res, cookie, header: '' };
  const session = `polita_console=${cookie.value}`;
  if (csrfCookie) return { res, cookie, header: `${session}; ${csrfCookie}` };
  const page = await h.service.app.inject({
    method: 'GET',
    url: '/console',
    headers: { ...headers, cookie: session },
  });
  const csrf = page.cookies.find((c) => c.name === 'polita_csrf');
  return { res, cookie, csrf, header: csrf ? `${session}; polita_csrf=${csrf.value}` : session };
}

const get = (url: string, cookie = '') =>
  h.service.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

/** The CSRF token a page hands its forms. */
async function csrfOf(cookie: string): Promise<string> {
  const page = await get('/console/settings', cookie);
  return /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
}

describe('sign-in', () => {
  it('opens a session in an HttpOnly, SameSite=Strict cookie on /console, keeping only its hash', async () => {
    const { res, cookie } = await signIn(h.adminToken);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console');
    expect(cookie).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.secure).toBeFalsy();
    expect(cookie!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await sql<{ id_sha256: string; actor: string; actor_name: string }>`
      select id_sha256, actor, actor_name from console_sessions`.execute(h.service.svc.db);
    expect(rows.rows.some((r) => r.id_sha256 === cookie!.value)).toBe(false);
    expect(rows.rows.some((r) => r.actor === 'admin-token' && r.actor_name === 'Admin token')).toBe(true);
  });

  it('sets the CSRF cookie with the same attributes on the first page', async () => {
    const { csrf } = await signIn(h.adminToken);
    expect(csrf).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict' });
    expect(csrf!.secure).toBeFalsy();
  });

  it('marks the cookies Secure when the request came over https', async () => {
    const { cookie, csrf } = await signIn(h.adminToken, { 'x-forwarded-proto': 'https' });
    expect(cookie!.secure).toBe(true);
    expect(csrf!.secure).toBe(true);
  });

  it('answers a wrong or empty token 401 with the reason, and opens nothing', async () => {
    for (const token of ['wrong', '']) {
      const { res, cookie } = await signIn(token);
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain('That token opens nothing');
      expect(cookie).toBeUndefined();
    }
  });

  it('sends every page to sign-in without a session, and htmx requests by HX-Redirect', async () => {
    for (const url of ['/console', '/console/orders', '/console/partners/demo', '/console/nowhere']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location).toBe('/console/sign-in');
    }
    const hx = await h.service.app.inject({
      method: 'GET',
      url: '/console/orders',
      headers: { 'hx-request': 'true' },
    });
    expect(hx.headers['hx-redirect']).toBe('/console/sign-in');
  });
});

describe('a session', () => {
  it('ends after 12 hours idle', async () => {
    const { header, cookie } = await signIn(h.adminToken);
    expect((await get('/console', header)).statusCode).toBe(200);
    await sql`update console_sessions set last_seen_at = now() - interval '12 hours 1 minute'
      where actor = 'admin-token' and last_seen_at > now() - interval '1 minute'`.execute(h.service.svc.db);
    const res = await get('/console', header);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/sign-in');
    expect(cookie).toBeDefined();
  });

  it('ends at sign-out', async () => {
    const { header } = await signIn(h.adminToken);
    const out = await h.service.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { ...FORM, cookie: header },
      payload: form({ _csrf: await csrfOf(header) }),
    });
    expect(out.statusCode).toBe(303);
    expect(out.cookies.find((c) => c.name === 'polita_console')?.value).toBe('');
    expect((await get('/console', header)).statusCode).toBe(303);
  });

  it('ends when its operator is disabled', async () => {
    const op = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Dana', role: 'admin' });
    const { header } = await signIn(op.token);
    const page = await get('/console', header);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Dana');
    await disableOperator(h.service.svc, SYSTEM_ACTOR, op.id);
    expect((await get('/console', header)).statusCode).toBe(303);
  });

  it("ends when its operator's token is rotated; the new token opens the API and the console", async () => {
    const op = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Radu', role: 'support' });
    const { header } = await signIn(op.token);
    expect((await get('/console', header)).statusCode).toBe(200);
    const rotated = await rotateOperatorToken(h.service.svc, SYSTEM_ACTOR, op.id);
    expect(rotated).toMatchObject({ id: op.id, name: 'Radu', role: 'support' });
    expect(rotated.token).not.toBe(op.token);
    expect((await get('/console', header)).statusCode).toBe(303);
    const api = (token: string) =>
      h.service.app.inject({
        method: 'GET',
        url: '/admin/partners',
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await api(op.token)).statusCode).toBe(403);
    expect((await api(rotated.token)).statusCode).toBe(200);
    expect((await signIn(rotated.token)).cookie).toBeDefined();
    // The log names the rotation and never the token.
    const log = await h.admin<{ entries: { action: string; target: string }[] }>(
      'GET',
      `/admin/audit?target=${op.id}`,
    );
    expect(log.body.entries.map((e) => e.action)).toContain('operator.rotate_token');
    expect(JSON.stringify(log.body)).not.toContain(rotated.token);
    // A disabled operator gets no new token.
    await disableOperator(h.service.svc, SYSTEM_ACTOR, op.id);
    await expect(rotateOperatorToken(h.service.svc, SYSTEM_ACTOR, op.id)).rejects.toThrow(
      'Operator not found or disabled',
    );
  });

  it('refuses a POST without its CSRF token or from another origin (403), and accepts the header htmx sends', async () => {
    const { header } = await signIn(h.adminToken);
    const token = await csrfOf(header);
    const post = (payload: Record<string, string>, headers: Record<string, string> = {}) =>
      h.service.app.inject({
        method: 'POST',
        url: '/console/settings',
        headers: { ...FORM, cookie: header, ...headers },
        payload: form(payload),
      });
    expect((await post({ balance_spending_enabled: 'on' })).statusCode).toBe(403);
    expect((await post({ _csrf: 'x'.repeat(43) })).statusCode).toBe(403);
    expect((await post({ _csrf: token }, { origin: 'https://evil.example' })).statusCode).toBe(403);
    // Nothing changed: spending is still enabled.
    expect((await h.admin('GET', '/admin/settings')).body).toEqual({ balance_spending_enabled: true });
    const ok = await post({}, { 'x-csrf-token': token });
    expect(ok.statusCode).toBe(303);
    expect((await h.admin('GET', '/admin/settings')).body).toEqual({ balance_spending_enabled: false });
    await h.admin('PUT', '/admin/settings', { balance_spending_enabled: true });
  });
});

describe('the CSRF token', () => {
  /** Settings saved with spending switched off (the form's checkbox left out). */
  const saveSettings = (cookie: string, fields: Record<string, string>, url = '/console/settings') =>
    h.service.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: form(fields) });
  const refusedForCsrf = (res: { statusCode: number; body: string }) => {
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('did not carry the console’s security token (CSRF)');
  };
  const cookieOf = (header: string, name: string) =>
    header.split('; ').find((c) => c.startsWith(`${name}=`))!;

  it('is bound to its session: another session’s is refused, in the same browser too', async () => {
    const first = await signIn(h.adminToken);
    const token = await csrfOf(first.header);
    // The same browser (the same CSRF cookie), a second session.
    const csrfCookie = cookieOf(first.header, 'polita_csrf');
    const op = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Ilie', role: 'admin' });
    const second = await signIn(op.token, {}, csrfCookie);
    refusedForCsrf(await saveSettings(second.header, { _csrf: token }));
    // Nor does a token outlive its session's sign-out.
    expect((await saveSettings(first.header, { _csrf: token }, '/console/sign-out')).statusCode).toBe(303);
    const again = await signIn(h.adminToken, {}, csrfCookie);
    refusedForCsrf(await saveSettings(again.header, { _csrf: token }));
    expect((await saveSettings(again.header, { _csrf: await csrfOf(again.header) })).statusCode).toBe(303);
    expect((await h.admin('GET', '/admin/settings')).body).toEqual({ balance_spending_enabled: false });
    await h.admin('PUT', '/admin/settings', { balance_spending_enabled: true });
  });

  it('never shows the session’s secret it is bound to', async () => {
    const { header } = await signIn(h.adminToken);
    const page = await get('/console/settings', header);
    const { rows } = await sql<{ csrf_token: string }>`select csrf_token from console_sessions`.execute(
      h.service.svc.db,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(page.body).not.toContain(r.csrf_token);
      expect(String(page.headers['set-cookie'] ?? '')).not.toContain(r.csrf_token);
    }
  });

  it('is refused without the CSRF cookie it was made with', async () => {
    const { header } = await signIn(h.adminToken);
    const token = await csrfOf(header);
    const session = cookieOf(header, 'polita_console');
    refusedForCsrf(await saveSettings(session, { _csrf: token }));
    const another = cookieOf((await signIn(h.adminToken)).header, 'polita_csrf');
    refusedForCsrf(await saveSettings(`${session}; ${another}`, { _csrf: token }));
    expect((await h.admin('GET', '/admin/settings')).body).toEqual({ balance_spending_enabled: true });
  });
});

describe('the pages', () => {
  /** The CSP's directives, each with its sources. */
  const directives = (csp: unknown) =>
    Object.fromEntries(
      String(csp)
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((d) => d[0])
        .map(([name, ...sources]) => [name, sources.join(' ')]),
    );
  /** What every console answer carries, pages and refusals alike (decision 0019). */
  function expectLockedDown(res: { headers: Record<string, unknown> }, what: string) {
    expect(directives(res.headers['content-security-policy']), what).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': "'self' data:",
      'connect-src': "'self'",
      'form-action': "'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
    });
    expect(res.headers['x-frame-options'], what).toBe('DENY');
    expect(res.headers['x-content-type-options'], what).toBe('nosniff');
    expect(res.headers['referrer-policy'], what).toBe('same-origin');
  }

  it('carry a strict CSP, no caching, and serve htmx and the stylesheet themselves', async () => {
    const { header } = await signIn(h.adminToken);
    const page = await get('/console', header);
    expectLockedDown(page, 'a page');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('src="/console/static/htmx.min.js"');
    expect(page.body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    // The sign-in page, the way to it, a page that is not there and a refused POST: the same.
    const refused = await h.service.app.inject({
      method: 'POST',
      url: '/console/settings',
      headers: { ...FORM, cookie: header },
      payload: form({}),
    });
    expect(refused.statusCode).toBe(403);
    for (const [what, res] of [
      ['sign-in', await get('/console/sign-in')],
      ['the redirect to sign-in', await get('/console/orders')],
      ['a missing page', await get('/console/nowhere', header)],
      ['a refused POST', refused],
    ] as const) {
      expectLockedDown(res, what);
      expect(res.headers['cache-control'], what).toBe('no-store');
    }
    const js = await get('/console/static/htmx.min.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
    expect(js.body).toContain('2.0.11');
    expectLockedDown(js, 'htmx');
    const css = await get('/console/static/console.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    // Files the service ships may be kept an hour; pages never.
    expect(css.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('static __proto__ → 404: only the stylesheet and htmx are served, no name reaches a prototype', async () => {
    const { header } = await signIn(h.adminToken);
    for (const file of [
      '__proto__',
      'constructor',
      'toString',
      'htmx.js',
      'package.json',
      '..%2Fviews%2Flayout.eta',
    ]) {
      const res = await get(`/console/static/${file}`, header);
      expect(res.statusCode, file).toBe(404);
      expect(res.body, file).toContain('There is no console page at');
    }
  });

  it('?done=constructor shows no notice: only the fixed sentences of known values', async () => {
    const { header } = await signIn(h.adminToken);
    for (const done of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      for (const url of [`/console?done=${done}`, `/console/settings?done=${done}`]) {
        const res = await get(url, header);
        expect(res.statusCode, url).toBe(200);
        expect(res.body, url).not.toContain('class="notice"');
        expect(res.body, url).not.toContain('native code');
      }
    }
    expect((await get('/console/settings?done=settings-saved', header)).body).toContain(
      '<p class="notice" role="status">The settings are saved.</p>',
    );
    // A period is one of the Overview's own, not whatever the name finds on an object.
    const period = await get('/console?period=toString', header);
    expect(period.statusCode).toBe(400);
    expect(period.body).toContain('Period must be one of 24h, 7d, 30d');
    expect(period.body).not.toContain('native code');
  });

  it('show a refused action’s reason with the operator API’s status', async () => {
    const { header } = await signIn(h.adminToken);
    const _csrf = await csrfOf(header);
    const post = (url: string, fields: Record<string, string>) =>
      h.service.app.inject({
        method: 'POST',
        url,
        headers: { ...FORM, cookie: header },
        payload: form({ _csrf, ...fields }),
      });
    const draft = await h.call<{ id: string }>('create-order', {
      customer: { phone: '+37369000000' },
      products: [rcaItem(localDate(await h.service.svc.clock.now()))],
    });
    const credit = (amount: string) => ({ wallet: 'online', amount, reference: `r-${amount}` });
    const cases: [string, Record<string, string>, number, string][] = [
      [
        `/console/orders/${draft.body.id}/refund`,
        { reason: 'test' },
        409,
        'Order is not refundable (status draft); only failed or completed orders are',
      ],
      // The refused form keeps what was typed.
      ['/console/partners/demo/credit', credit('0'), 400, 'value="r-0"'],
      ['/console/partners/nobody/credit', credit('5'), 404, 'Partner not found'],
    ];
    for (const [url, fields, status, says] of cases) {
      const res = await post(url, fields);
      expect(res.statusCode, url).toBe(status);
      expect(res.body).toContain(says);
    }
  });

  it('are not in the partner API document', async () => {
    const doc = (await get('/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });

  it('record who acted through the console in the audit log', async () => {
    const { header } = await signIn(h.adminToken);
    const res = await h.service.app.inject({
      method: 'POST',
      url: '/console/settings',
      headers: { ...FORM, cookie: header },
      payload: form({ _csrf: await csrfOf(header), balance_spending_enabled: 'on' }),
    });
    expect(res.statusCode).toBe(303);
    const audit = await h.admin<{ entries: { actor: string; via: string; action: string }[] }>(
      'GET',
      '/admin/audit?limit=5',
    );
    expect(audit.body.entries[0]).toMatchObject({
      actor: 'admin-token',
      via: 'console',
      action: 'settings.change',
    });
  });
});
