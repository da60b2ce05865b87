import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { buildServer } from '../../src/http/server.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * The second security round's findings on pages, documents and console sessions (decisions 0047,
 * 0049): 5 (a console session outlives ADMIN_TOKEN), 11 (prototype lookups), 12 (/docs headers and
 * server), 13 (a refunded order's policy still served).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A console session of `token` on `app`: the cookie header a browser would send. */
async function consoleSession(app: Harness['service']['app'], token: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: FORM,
    payload: new URLSearchParams({ token }).toString(),
  });
  const cookie = res.cookies.find((c) => c.name === 'polita_console');
  expect(cookie, res.body).toBeDefined();
  return `polita_console=${cookie!.value}`;
}

describe('finding 5: console sessions outlive a change of ADMIN_TOKEN', () => {
  it('a session opened with the old admin token ends when the service runs with a new one', async () => {
    const cookie = await consoleSession(h.service.app, h.adminToken);
    const open = await h.service.app.inject({ method: 'GET', url: '/console/partners', headers: { cookie } });
    expect(open.statusCode).toBe(200);
    // The same database, a service whose ADMIN_TOKEN is another (a restart with a new token).
    const renewed = await buildServer(h.service.svc, {
      adminToken: 'a-new-admin-token-of-32-characters!!',
      logger: pino({ level: 'silent' }),
    });
    try {
      const page = await renewed.inject({ method: 'GET', url: '/console/partners', headers: { cookie } });
      expect(page.statusCode).toBe(303);
      expect(page.headers.location).toBe('/console/sign-in');
      const p = await h.newPartner();
      const disable = await renewed.inject({
        method: 'POST',
        url: `/console/partners/${p.id}/disable`,
        headers: { cookie, ...FORM },
        payload: '',
      });
      expect(disable.statusCode).toBe(403);
      expect((await h.admin('GET', `/admin/partners/${p.id}`)).body.disabled).toBe(false);
      // And the session is gone for good, on the old service too.
      const again = await h.service.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
      expect(again.statusCode).toBe(303);
      // A sign-in with the new token opens a session there.
      const fresh = await consoleSession(renewed, 'a-new-admin-token-of-32-characters!!');
      expect(
        (await renewed.inject({ method: 'GET', url: '/console', headers: { cookie: fresh } })).statusCode,
      ).toBe(200);
    } finally {
      await renewed.close();
    }
  });
});

describe('finding 11: request-named keys looked up on a prototype', () => {
  it('/console/static/__proto__, constructor and toString are 404, and ?done=constructor shows nothing', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const res = await h.service.app.inject({ method: 'GET', url: `/console/static/${name}` });
      expect(res.statusCode, name).toBe(404);
    }
    const cookie = await consoleSession(h.service.app, h.adminToken);
    for (const done of ['constructor', '__proto__', 'toString', 'valueOf']) {
      const page = await h.service.app.inject({
        method: 'GET',
        url: `/console/settings?done=${done}`,
        headers: { cookie },
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('native code');
      expect(page.body).not.toContain('[object');
    }
  });

  it('/files/__proto__ and other key-like names are 404 with the JSON shape', async () => {
    for (const name of ['__proto__', 'constructor', '__proto__.pdf']) {
      const res = await h.service.app.inject({ method: 'GET', url: `/files/${name}` });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        statusCode: 404,
        error: 'Document not found',
        message: 'Document not found',
      });
    }
  });
});

describe('finding 12: /docs without a CSP or frame protection, its server from Host', () => {
  it('carries the console’s security headers on the page and its files', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/theme/try-it-out.js', '/docs/json']) {
      const res = await h.service.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(400);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('names PUBLIC_BASE_URL as its server whatever the Host header says', async () => {
    for (const url of ['/docs/json', '/openapi.json']) {
      const res = await h.service.app.inject({ method: 'GET', url, headers: { host: 'evil.example' } });
      expect(res.json().servers).toEqual([{ url: 'http://polita.test', description: 'Sandbox' }]);
      expect(res.body).not.toContain('evil.example');
    }
  });
});

describe('finding 13: a refunded order’s policy PDF is still served', () => {
  it('answers 410 on the public URL after the refund, and the console still opens it', async () => {
    const today = localDate(await h.service.svc.clock.now());
    const id = await paidRcaOrder(h, h.demo, today);
    const done = await h.waitForStatus(id, 'completed');
    const file = (done.body.products as { file?: string }[])[0]!.file!;
    const path = new URL(file).pathname;
    expect((await h.service.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
    const refund = await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'customer withdrew' });
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    const gone = await h.service.app.inject({ method: 'GET', url: path });
    expect(gone.statusCode).toBe(410);
    expect(gone.json()).toEqual({
      statusCode: 410,
      error: 'Policy cancelled: the order was refunded',
      message: 'Policy cancelled: the order was refunded',
    });
    const cookie = await consoleSession(h.service.app, h.adminToken);
    const orderPage = await h.service.app.inject({
      method: 'GET',
      url: `/console/orders/${id}`,
      headers: { cookie },
    });
    const link = /href="(\/console\/files\/[^"]+)"/.exec(orderPage.body)?.[1];
    expect(link).toBeDefined();
    const opened = await h.service.app.inject({ method: 'GET', url: link!, headers: { cookie } });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['content-type']).toBe('application/pdf');
    expect(opened.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    // Without a session the console's copy is not reachable.
    expect((await h.service.app.inject({ method: 'GET', url: link! })).statusCode).toBe(303);
  });
});
