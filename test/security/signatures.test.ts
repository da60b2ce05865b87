import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signatureHeader, timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { credit, rcaDraft, rcaOffers } from '../wallet/support.ts';

/**
 * Timestamped request signatures (decision 0045): findings 1 and 2 of the second security round,
 * with the partner switched to them, and the spec's behaviour kept for a partner left on the default.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const now = () => Math.floor(Date.now() / 1000);

/** A POST to /v1/<endpoint> with exactly these headers and bytes. */
async function send(endpoint: string, payload: string, headers: Record<string, string | string[]>) {
  const res = await h.service.app.inject({
    method: 'POST',
    url: `/v1/${endpoint}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload,
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

const stamped = (creds: Creds, endpoint: string, payload: string, t = now()) => ({
  'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, endpoint, payload, t),
});

/** A new partner switched to timestamped signatures after `before` ran with the spec's header. */
async function switchedPartner(before?: (p: Creds) => Promise<void>): Promise<Creds> {
  const p = await h.newPartner();
  await before?.(p);
  const res = await h.admin('PATCH', `/admin/partners/${p.id}`, { require_timestamped_signature: true });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.require_timestamped_signature).toBe(true);
  return p;
}

async function balanceOf(p: Creds) {
  const body = '{}';
  const res = await send('get-balance', body, stamped(p, 'get-balance', body));
  expect(res.status).toBe(200);
  return res.body.balance as number;
}

describe('finding 1: a captured request replays for ever and against another endpoint', () => {
  it('a get-order signature does not pay the order from the balance (timestamped, partner switched)', async () => {
    let draft = { id: '', price: 0 };
    const p = await switchedPartner(async (q) => {
      await credit(h, q.id, 'online', 20_000);
      draft = await rcaDraft(h, (await rcaOffers(h, q))[0]!, q);
    });
    const before = await balanceOf(p);
    const body = JSON.stringify({ id: draft.id });
    const header = stamped(p, 'get-order', body);
    expect((await send('get-order', body, header)).status).toBe(200);
    // The same bytes and header against pay-order-from-balance: the endpoint is signed.
    const replayed = await send('pay-order-from-balance', body, header);
    expect(replayed.status).toBe(403);
    expect(replayed.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Invalid signature' });
    expect(await balanceOf(p)).toBe(before);
    const order = await send('get-order', body, stamped(p, 'get-order', body));
    expect(order.body.status).toBe('draft');
  });

  it('a capture older than 300 s is refused with 401 naming the window; so is one from the future', async () => {
    const p = await switchedPartner();
    const body = '{}';
    for (const t of [now() - 302, now() + 302]) {
      const res = await send('get-balance', body, stamped(p, 'get-balance', body, t));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Signature timestamp outside the allowed window',
      });
    }
    for (const t of [now() - 290, now() + 290])
      expect((await send('get-balance', body, stamped(p, 'get-balance', body, t))).status).toBe(200);
  });

  it('the spec header alone is refused for a switched partner (401 Timestamped signature required)', async () => {
    const p = await switchedPartner();
    const body = '{}';
    const res = await send('get-balance', body, {
      'x-hmac-signature': signatureHeader(p.id, p.secret, body),
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: 'Timestamped signature required',
    });
    // A wrong spec signature stays the plain 403: the 401 says nothing to who holds no secret.
    const wrong = await send('get-balance', body, { 'x-hmac-signature': `${p.id}:${'0'.repeat(128)}` });
    expect(wrong.status).toBe(403);
  });

  it('when X-Polita-Signature is present the spec header is ignored, right or wrong', async () => {
    const p = await switchedPartner();
    const body = '{}';
    const good = stamped(p, 'get-balance', body);
    const specRight = signatureHeader(p.id, p.secret, body);
    const specWrong = `${p.id}:${'0'.repeat(128)}`;
    expect((await send('get-balance', body, { ...good, 'x-hmac-signature': specWrong })).status).toBe(200);
    const badStamp = {
      'x-polita-signature': good['x-polita-signature'].replace(
        /v1=(.)/,
        (_, c: string) => `v1=${c === '0' ? '1' : '0'}`,
      ),
    };
    expect((await send('get-balance', body, { ...badStamp, 'x-hmac-signature': specRight })).status).toBe(
      403,
    );
  });

  it('either valid secret signs during a rotation', async () => {
    const p = await switchedPartner();
    const rotated = await h.admin<{ secret: string }>('POST', `/admin/partners/${p.id}/secrets`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const body = '{}';
    for (const secret of [p.secret, rotated.body.secret])
      expect(
        (await send('get-balance', body, stamped({ id: p.id, secret }, 'get-balance', body))).status,
      ).toBe(200);
  });
});

describe('finding 2: a webhook signature is a valid API credential', () => {
  it('a delivered webhook body and its X-Hmac-Signature do not read the balance of a switched partner', async () => {
    const p = await switchedPartner();
    // What a webhook carries: the spec's header over the event body, made with the partner's secret.
    const body = JSON.stringify({ orderId: 'ORD0000000000', status: 'test' });
    const res = await send('get-balance', body, {
      'x-hmac-signature': signatureHeader(p.id, p.secret, body),
    });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Timestamped signature required');
    // Nor does the webhook's own timestamped header, which has no id part and signs another string.
    const t = now();
    const webhookStyle = `t=${t},v1=${'a'.repeat(128)}`;
    expect((await send('get-balance', body, { 'x-polita-signature': webhookStyle })).status).toBe(403);
  });
});

describe('a partner the operator leaves on the spec’s header keeps the spec’s behaviour', () => {
  it('signs with X-Hmac-Signature alone, replays included, and may also use the timestamped form', async () => {
    const p = await h.newPartner({ require_timestamped_signature: false });
    const got = await h.admin('GET', `/admin/partners/${p.id}`);
    expect(got.body.require_timestamped_signature).toBe(false);
    const body = '{}';
    const header = { 'x-hmac-signature': signatureHeader(p.id, p.secret, body) };
    expect((await send('get-balance', body, header)).status).toBe(200);
    expect((await send('get-balance', body, header)).status).toBe(200);
    expect((await send('get-balance', body, stamped(p, 'get-balance', body))).status).toBe(200);
    const missing = await send('get-balance', body, {});
    expect(missing.status).toBe(401);
    expect(missing.body.message).toBe('Missing X-Hmac-Signature header');
  });
});

describe('a partner id no partner can have', () => {
  it('is refused as an unknown one (403), counted, and never looked up', async () => {
    const p = await h.newPartner();
    const body = '{}';
    const lookups = vi.spyOn(h.service.svc.partners, 'get');
    try {
      for (const id of [p.id.toUpperCase(), 'a', 'x'.repeat(65), `${p.id}é`, `-${p.id}`]) {
        const res = await send('get-balance', body, {
          'x-hmac-signature': signatureHeader(id, p.secret, body),
        });
        expect(res.status, id).toBe(403);
        expect(res.body.message).toBe('Invalid signature');
      }
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      lookups.mockRestore();
    }
  });
});

describe('a fuzz of the timestamped header answers only 401 or 403', () => {
  it('wrong t, missing, reordered and repeated parts, repeated headers, both headers with one wrong', async () => {
    const p = await switchedPartner();
    const body = '{}';
    const t = now();
    const good = timestampedSignatureHeader(p.id, p.secret, 'get-balance', body, t);
    const v1 = good.split('v1=')[1]!;
    const spec = signatureHeader(p.id, p.secret, body);
    const cases: Record<string, string | string[]>[] = [];
    const parts = [`id=${p.id}`, `t=${t}`, `v1=${v1}`];
    const variants = [
      `id=${p.id},t=${t}`,
      `id=${p.id},v1=${v1}`,
      `t=${t},v1=${v1}`,
      `${parts.join(',')},t=${t}`,
      `${parts.join(',')},id=${p.id}`,
      `${parts.join(',')},v1=${v1}`,
      `${parts.join(',')},v2=${v1}`,
      `${parts.join(', ')}`,
      ` ${parts.join(',')}`.replace(',', ' ,'),
      `id=${p.id},t=${t + 1},v1=${v1}`,
      `id=${p.id},t=0${t},v1=${v1}`,
      `id=${p.id},t=${t}.0,v1=${v1}`,
      `id=${p.id},t=-${t},v1=${v1}`,
      `id=${p.id},t=,v1=${v1}`,
      `id=${p.id},t=${t - 1000},v1=${v1}`,
      `id=${p.id},t=99999999999999999999,v1=${v1}`,
      `id=${p.id},t=${t},v1=${v1.toUpperCase()}`,
      `id=${p.id},t=${t},v1=${v1.slice(2)}`,
      `id=,t=${t},v1=${v1}`,
      `id=someone-else,t=${t},v1=${v1}`,
      `=${p.id},t=${t},v1=${v1}`,
      `id=${p.id};t=${t};v1=${v1}`,
      '',
      ',,,',
      'garbage',
    ];
    for (const v of variants) cases.push({ 'x-polita-signature': v });
    cases.push({ 'x-polita-signature': v1 }, { 'x-polita-signature': [good, good] });
    cases.push({ 'x-polita-signature': [good, `id=${p.id},t=${t},v1=${'0'.repeat(128)}`] });
    cases.push({ 'x-polita-signature': `id=${p.id},t=${t},v1=${'0'.repeat(128)}`, 'x-hmac-signature': spec });
    cases.push({ 'x-polita-signature': `id=${p.id},t=${t - 400},v1=${v1}`, 'x-hmac-signature': spec });
    cases.push({ 'x-hmac-signature': spec, 'x-polita-signature': `${good},id=${p.id}` });
    // Every order of the three parts is accepted; each shuffled and broken one is not.
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
    ];
    for (const o of orders) {
      const header = o.map((i) => parts[i]).join(',');
      expect((await send('get-balance', body, { 'x-polita-signature': header })).status, header).toBe(200);
      cases.push({ 'x-polita-signature': header.replace(String(t), String(t - 1)) });
    }
    // Random single-character damage anywhere in the header.
    for (let i = 0; i < 200; i++) {
      const at = Math.floor(Math.random() * good.length);
      const c = String.fromCharCode(33 + Math.floor(Math.random() * 94));
      const damaged = good.slice(0, at) + c + good.slice(at + 1);
      if (damaged !== good) cases.push({ 'x-polita-signature': damaged });
    }
    for (const [i, headers] of cases.entries()) {
      const res = await h.service.app.inject({
        method: 'POST',
        url: '/v1/get-balance',
        headers: { 'content-type': 'application/json', ...headers },
        payload: body,
        // One address each: the failed-authentication limit is not what this test is about.
        remoteAddress: `10.36.${i >> 8}.${i & 255}`,
      });
      expect([401, 403], `${JSON.stringify(headers)} → ${res.statusCode} ${res.body}`).toContain(
        res.statusCode,
      );
    }
  });
});

describe('the switch in the console', () => {
  it('requires timestamped signatures from the partner page, and accepts the spec header again', async () => {
    const p = await h.newPartner({ require_timestamped_signature: false });
    const signIn = await h.service.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: h.adminToken }).toString(),
    });
    const session = `polita_console=${signIn.cookies.find((c) => c.name === 'polita_console')!.value}`;
    const page = await h.service.app.inject({
      method: 'GET',
      url: `/console/partners/${p.id}`,
      headers: { cookie: session },
    });
    expect(page.body).toContain('Require timestamped signatures');
    const csrfCookie = page.cookies.find((c) => c.name === 'polita_csrf')!;
    const cookie = `${session}; polita_csrf=${csrfCookie.value}`;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const post = (action: string) =>
      h.service.app.inject({
        method: 'POST',
        url: `/console/partners/${p.id}/${action}`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf }).toString(),
      });
    const on = await post('timestamped-required');
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe(`/console/partners/${p.id}?done=timestamped-required`);
    const body = '{}';
    const spec = { 'x-hmac-signature': signatureHeader(p.id, p.secret, body) };
    expect((await send('get-balance', body, spec)).status).toBe(401);
    const shown = await h.service.app.inject({
      method: 'GET',
      url: on.headers.location!,
      headers: { cookie },
    });
    expect(shown.body).toContain('timestamped only (X-Polita-Signature)');
    expect(shown.body).toContain('Accept X-Hmac-Signature again');
    expect((await post('timestamped-optional')).statusCode).toBe(303);
    expect((await send('get-balance', body, spec)).status).toBe(200);
  });
});
