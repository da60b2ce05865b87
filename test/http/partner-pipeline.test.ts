import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandler } from '../../src/http/errors.ts';
import { installJsonBodies, keepSignedBytes, parseSignedBody } from '../../src/http/raw-body.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * The partner API's request pipeline (src/http/partner-pipeline.ts, decision 0101): its body steps
 * alone, on a bare Fastify, and the order of all five on the service.
 */
describe('the body steps alone', () => {
  async function bare(install: (app: ReturnType<typeof Fastify>) => void) {
    const app = Fastify();
    installErrorHandler(app);
    install(app);
    app.post('/echo', async (req) => ({
      body: req.body ?? null,
      bytes: req.rawBody?.toString('utf8') ?? null,
    }));
    await app.ready();
    return app;
  }
  const post = (app: ReturnType<typeof Fastify>, payload: string, type = 'application/json') =>
    app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': type }, payload });

  it('keepSignedBytes keeps the bytes of any Content-Type and parses nothing', async () => {
    const app = await bare(keepSignedBytes);
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const res = await post(app, 'not json at all', type);
      expect(res.json()).toEqual({ body: null, bytes: 'not json at all' });
    }
  });

  it('parseSignedBody parses the kept bytes, or answers 400 naming why', async () => {
    const app = await bare((a) => {
      keepSignedBytes(a);
      a.addHook('preValidation', parseSignedBody);
    });
    expect((await post(app, '{"a":[1,"x"]}')).json()).toEqual({
      body: { a: [1, 'x'] },
      bytes: '{"a":[1,"x"]}',
    });
    const garbage = await post(app, '{"a":');
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().message).toBe('Body is not valid JSON');
    const nul = await post(app, '{"name":"a\\u0000b"}');
    expect(nul.statusCode).toBe(400);
    expect(nul.json().message).toBe('body/name must not contain U+0000 or an unpaired surrogate');
  });

  it('installJsonBodies gives every other scope a parsed body, whatever the Content-Type', async () => {
    const app = await bare(installJsonBodies);
    expect((await post(app, '{"a":1}', 'text/plain')).json()).toEqual({ body: { a: 1 }, bytes: '{"a":1}' });
    const garbage = await post(app, 'nope');
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json()).toEqual({
      statusCode: 400,
      error: 'Body is not valid JSON',
      message: 'Body is not valid JSON',
    });
  });
});

describe('the five steps, in their order, on the service', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ workers: false });
  });
  afterAll(async () => h?.close());

  const send = (payload: string, headers: Record<string, string>) =>
    h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers',
      headers: { 'content-type': 'application/json', ...headers },
      payload,
    });
  let t = Math.floor(Date.now() / 1000) - 100;
  const signed = (payload: string, id = h.demo.id, secret = h.demo.secret) => ({
    'x-polita-signature': timestampedSignatureHeader(id, secret, 'get-offers', payload, t++),
  });

  it('1 before 2: no signature header is 401 before the body is read, even one over 64 KiB', async () => {
    const res = await send(`{"a":"${'x'.repeat(70 * 1024)}"}`, {});
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('Missing X-Hmac-Signature header');
  });

  it('3 before 4: a wrong signature over a body that is not JSON is 403, never 400', async () => {
    const res = await send('{"a":', signed('{"a":', h.demo.id, 'f'.repeat(64)));
    expect(res.statusCode).toBe(403);
  });

  it('3 before 4: a wrong signature on a request whose query holds U+0000 is 403, not 400', async () => {
    const body = '{"product":"rca","vehicle":"100000001","duration":365,"idnx":"2003000000016"}';
    const wrong = await h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers?x=%00',
      headers: { 'content-type': 'application/json', ...signed(body, h.demo.id, 'f'.repeat(64)) },
      payload: body,
    });
    expect(wrong.statusCode).toBe(403);
    const right = await h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers?x=%00',
      headers: { 'content-type': 'application/json', ...signed(body) },
      payload: body,
    });
    expect(right.statusCode).toBe(400);
    expect(right.json().message).toBe('querystring/x must not contain U+0000 or an unpaired surrogate');
  });

  it('4 after 3: a signed body that is not JSON is 400', async () => {
    const res = await send('{"a":', signed('{"a":'));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Body is not valid JSON');
  });

  it('5 before the schema: over its limit, a partner is refused 429 even for a body the schema refuses', async () => {
    const p = await h.newPartner();
    await h.admin('PATCH', `/admin/partners/${p.id}`, { rate_limit_per_minute: 1 });
    const first = await send('{}', signed('{}', p.id, p.secret));
    expect(first.statusCode).toBe(400); // within the limit: the schema's answer
    const second = await send('{}', signed('{}', p.id, p.secret));
    expect(second.statusCode).toBe(429);
  });
});
