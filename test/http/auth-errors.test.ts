import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RCA_QUOTE, rcaItem, startHarness, type Creds, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  // The contract's X-Hmac-Signature, for partners the operator left on it (decision 0084).
  h = await startHarness({ workers: false, env: { DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE: 'false' } });
  await h.setClock('2026-11-21T12:00:00+02:00');
});
afterAll(() => h?.close());

const hmac = (secret: string, body: string) => createHmac('sha512', secret).update(body).digest('hex');

/** A POST /v1/<endpoint> with exactly the header and bytes given (undefined header: none sent). */
async function raw(
  endpoint: string,
  body: string,
  header: string | undefined,
  extra: Record<string, string> = {},
) {
  const res = await h.service.app.inject({
    method: 'POST',
    url: `/v1/${endpoint}`,
    headers: {
      'content-type': 'application/json',
      ...(header !== undefined ? { 'x-hmac-signature': header } : {}),
      ...extra,
    },
    payload: body,
  });
  return {
    status: res.statusCode,
    body: res.json() as Record<string, unknown>,
    type: res.headers['content-type'],
  };
}

const GET_ORDER = JSON.stringify({ id: 'IAI000000AAA' });
const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Invalid signature' };

describe('request signature', () => {
  it('answers 401 when the header is missing, even for a garbage body', async () => {
    for (const body of [GET_ORDER, '{not json', '']) {
      const res = await raw('get-order', body, undefined);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    }
  });

  it('answers 403 with one and the same body for every bad signature', async () => {
    const good = hmac(h.demo.secret, GET_ORDER);
    const other = await h.newPartner();
    const cases: [string, string, string][] = [
      ['empty header', GET_ORDER, ''],
      ['no colon', GET_ORDER, `demo${good}`],
      ['no partner id', GET_ORDER, `:${good}`],
      ['non-hex', GET_ORDER, `demo:${'z'.repeat(128)}`],
      ['uppercase hex', GET_ORDER, `demo:${good.toUpperCase()}`],
      ['too short', GET_ORDER, `demo:${good.slice(0, 126)}`],
      ['too long', GET_ORDER, `demo:${good}00`],
      [
        'SHA-256 length',
        GET_ORDER,
        `demo:${createHmac('sha256', h.demo.secret).update(GET_ORDER).digest('hex')}`,
      ],
      ['unknown partner', GET_ORDER, `nobody:${good}`],
      ["another partner's id", GET_ORDER, `${other.id}:${good}`],
      ['wrong secret', GET_ORDER, `demo:${hmac('not-the-secret', GET_ORDER)}`],
      ['body changed after signing', JSON.stringify({ id: 'IAI000000AAA' }, null, 1), `demo:${good}`],
      ['garbage body, wrong signature', '{garbage', `demo:${good}`],
    ];
    for (const [what, body, header] of cases) {
      const res = await raw('get-order', body, header);
      expect({ what, status: res.status, body: res.body }).toEqual({ what, status: 403, body: FORBIDDEN });
    }
  });

  it('refuses a disabled partner with the same 403, and lets it in again when re-enabled', async () => {
    const p = await h.newPartner();
    const body = JSON.stringify({ id: 'IAI000000AAA' });
    expect((await h.call('get-order', { id: 'IAI000000AAA' }, p)).status).toBe(404);
    expect((await h.admin('PATCH', `/admin/partners/${p.id}`, { disabled: true })).status).toBe(200);
    const res = await raw('get-order', body, `${p.id}:${hmac(p.secret, body)}`);
    expect(res).toMatchObject({ status: 403, body: FORBIDDEN });
    expect((await h.admin('PATCH', `/admin/partners/${p.id}`, { disabled: false })).status).toBe(200);
    expect((await h.call('get-order', { id: 'IAI000000AAA' }, p)).status).toBe(404);
  });

  it('answers 400 "Body is not valid JSON" only once the signature is valid', async () => {
    const body = '{"id": "IAI000000AAA"';
    const res = await raw('get-order', body, `demo:${hmac(h.demo.secret, body)}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'Body is not valid JSON',
      message: 'Body is not valid JSON',
    });
  });

  it('keeps old and new secrets valid through a rotation until the old ones are retired', async () => {
    const p = await h.newPartner();
    // Past the clock's 1 s cache, so the rotation reads the clock from the database.
    await new Promise((r) => setTimeout(r, 1100));
    const rotated = await h.admin<{ secret: string }>('POST', `/admin/partners/${p.id}/secrets`);
    expect(rotated.status).toBe(201);
    expect(rotated.body).toEqual({ secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const fresh: Creds = { id: p.id, secret: rotated.body.secret };
    expect(fresh.secret).not.toBe(p.secret);
    const get = (c: Creds) => h.call('get-order', { id: 'IAI000000AAA' }, c).then((r) => r.status);
    expect(await get(p)).toBe(404);
    expect(await get(fresh)).toBe(404);

    await new Promise((r) => setTimeout(r, 1100));
    const retired = await h.admin('DELETE', `/admin/partners/${p.id}/secrets/old`);
    expect(retired.status).toBe(200);
    expect(await get(p)).toBe(403);
    expect(await get(fresh)).toBe(404);
  });

  it('never opens /v1 with the admin token, nor /admin with a partner signature', async () => {
    const v1 = await raw('get-order', GET_ORDER, undefined, { authorization: `Bearer ${h.adminToken}` });
    expect(v1.status).toBe(401);

    const signed = `demo:${hmac(h.demo.secret, '')}`;
    const asPartner = await h.service.app.inject({
      method: 'GET',
      url: '/admin/orders',
      headers: { 'x-hmac-signature': signed },
    });
    expect(asPartner.statusCode).toBe(401);
    expect(asPartner.json()).toMatchObject({ statusCode: 401 });
    const secretAsToken = await h.service.app.inject({
      method: 'GET',
      url: '/admin/orders',
      headers: { authorization: `Bearer ${h.demo.secret}` },
    });
    expect(secretAsToken.statusCode).toBe(403);
    expect(secretAsToken.json()).toMatchObject({ statusCode: 403 });
  });
});

describe('error shapes', () => {
  const customer = { phone: '+37369000000' };

  it('names the offending field on a schema 400', async () => {
    const res = await h.call('create-order', { customer, products: [rcaItem('21.11.2026')] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'body/products/0/start_date must match format "date"',
      message: 'body/products/0/start_date must match format "date"',
    });
    const missing = await h.call('create-order', { products: [rcaItem('2026-11-21')] });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^body must have required property 'customer'/);
  });

  it('answers an unknown product with 400 naming the product field', async () => {
    const res = await h.call('create-order', { customer, products: [{ product: 'spaceship' }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body\/products\/0\/product must be one of: .*rca/);
    const quote = await h.call('get-offers', { product: 'spaceship' });
    expect(quote.status).toBe(400);
    expect(quote.body.message).toMatch(/^body\/product must be one of: /);
  });

  it('answers a product rule on create-order with 500 "[API] <reason>"', async () => {
    const res = await h.call('create-order', {
      customer,
      products: [rcaItem('2026-11-21', { insurance_company: 'nobody' })],
    });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: '[API] Unknown insurance_company nobody',
    });
    const unknownVehicle = await h.call('create-order', {
      customer,
      products: [rcaItem('2026-11-21', { vehicle: '999999999' })],
    });
    expect(unknownVehicle.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: '[API] Vehicle not found',
    });
    const quote = await h.call('get-offers', { ...RCA_QUOTE, vehicle: '999999999' });
    expect(quote.status).toBe(404);
    expect(quote.body).toMatchObject({ error: 'Vehicle not found' });
  });

  it('answers 404 "Order not found" for an unknown order', async () => {
    const res = await h.call('get-order', { id: 'IAI999999ZZZ' });
    expect(res).toMatchObject({
      status: 404,
      body: { statusCode: 404, error: 'Order not found', message: 'Order not found' },
    });
  });

  it('answers a body over 64 KiB with 413 in the JSON error shape', async () => {
    const body = JSON.stringify({ id: 'IAI000000AAA', pad: 'x'.repeat(70 * 1024) });
    const res = await raw('get-order', body, `demo:${hmac(h.demo.secret, body)}`);
    expect(res.status).toBe(413);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({ statusCode: 413, error: expect.any(String), message: expect.any(String) });
  });

  it('answers an unknown route with a JSON 404', async () => {
    for (const [method, url] of [
      ['POST', '/v1/no-such-endpoint'],
      ['GET', '/nowhere'],
    ] as const) {
      const res = await h.service.app.inject({ method, url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ statusCode: 404, error: expect.any(String), message: expect.any(String) });
    }
  });

  it('ignores unknown request fields and never echoes them', async () => {
    const quote = await h.call<{ offers: Record<string, unknown>[] }>('get-offers', {
      ...RCA_QUOTE,
      secret_note: 'x',
    });
    expect(quote.status).toBe(200);
    for (const offer of quote.body.offers) expect(offer).not.toHaveProperty('secret_note');
    const created = await h.call('create-order', {
      customer: { ...customer, loyalty: 'gold' },
      products: [
        rcaItem('2026-11-21', { extra: 'echo me', insurance_company: quote.body.offers[0]!.company }),
      ],
      note: 'echo me',
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['currency', 'description', 'id', 'price', 'status']);
    const read = await h.call('get-order', { id: created.body.id, note: 'echo me' });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('echo me');
    expect(Object.keys(read.body).sort()).toEqual(['currency', 'description', 'id', 'price', 'status']);
  });
});

describe('operations endpoints', () => {
  const get = (url: string) => h.service.app.inject({ method: 'GET', url });

  it('answers /healthz and /readyz', async () => {
    expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await get('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('puts a request id on every answer, refusals and unknown routes too, and takes the caller’s', async () => {
    const unsigned = await h.service.app.inject({ method: 'POST', url: '/v1/get-offers', payload: {} });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await get('/no-such-route');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const ok = await h.service.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'trace-42' },
    });
    expect(ok.headers['x-request-id']).toBe('trace-42');
  });

  it('exposes Prometheus metrics with route labels, orders and queue depth, to an operator token only', async () => {
    await h.call('get-order', { id: 'IAI000000AAA' });
    await h.call('get-order', { id: 'IAI000000AAA' });
    expect((await get('/metrics')).statusCode).toBe(401);
    const wrong = await h.service.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer not-the-token-at-all' },
    });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.body).not.toContain('http_request_duration_seconds');
    const res = await h.service.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(res.statusCode).toBe(200);
    // Both calls counted under one labelled series.
    expect(res.body).toMatch(
      /http_request_duration_seconds_count\{route="\/v1\/get-order",method="POST",status="404"\} [2-9]/,
    );
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{[^}]*route="\/v1\/get-order"/);
    expect(res.body).toContain('polita_orders');
    expect(res.body).toContain('polita_job_queue_depth');
    expect(res.body).toMatch(/^polita_issuance_outbox_orders \d+$/m);
    expect(res.body).toMatch(/^polita_issuance_outbox_oldest_seconds [\d.e-]+$/m);
  });

  it('describes the partner API in /openapi.json and serves /docs', async () => {
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    for (const p of ['/v1/get-offers', '/v1/create-order', '/v1/confirm-order', '/v1/get-order'])
      expect(doc.paths).toHaveProperty([p]);
    for (const s of ['Order', 'Offer', 'IssuedProduct', 'Error'])
      expect(doc.components.schemas).toHaveProperty([s]);
    const docs = await get('/docs');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('METRICS_TOKEN', () => {
  it('reads /metrics and opens nothing else', async () => {
    const m = await startHarness({ env: { METRICS_TOKEN: 'scraper-token-0123456789' } });
    try {
      const as = (url: string) =>
        m.service.app.inject({
          method: 'GET',
          url,
          headers: { authorization: 'Bearer scraper-token-0123456789' },
        });
      expect((await as('/metrics')).statusCode).toBe(200);
      expect((await as('/admin/orders')).statusCode).toBe(403);
    } finally {
      await m.close();
    }
  });
});
