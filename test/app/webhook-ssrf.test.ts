import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resendOrderEvent } from '../../src/app/deliver-webhook.ts';
import {
  fakeResolver,
  payment,
  rcaItem,
  startHarness,
  type Creds,
  type Harness,
} from '../support/harness.ts';

/**
 * The webhook URL guard end to end: refused when set, and at delivery on the address actually
 * connected to. Names are resolved by a fake resolver; every packet these tests send goes to
 * 127.0.0.0/8 (a refused address must be refused before any connection).
 */
const TODAY = '2026-11-21';
let h: Harness;
const lookups: string[] = [];
/** Answers of the fake resolver for `flip.test`, one per call. */
let flip: string[][] = [];
const names = fakeResolver({
  'rebind.example': ['10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': ['127.0.0.1', '10.0.0.5'],
  'ula.example': ['fd00::1'],
  'mapped.example': ['::ffff:a00:5'],
  'compat.example': ['::7f00:1'],
  'hooks.test': ['127.0.0.1'],
});
const resolve = async (host: string) => {
  lookups.push(host);
  if (host === 'flip.test') {
    const answer = flip.shift() ?? ['10.0.0.5'];
    return answer.map((address) => ({ address, family: 4 }));
  }
  return names(host);
};

/** Local HTTP servers: the receiver counts POSTs; the redirector answers 302 to the receiver. */
let receiver: Server;
let redirector: Server;
let receiverPort: number;
let redirectorPort: number;
const hits: string[] = [];

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push(`${req.headers.host} ${req.url} ${Buffer.concat(chunks).toString()}`);
      res.writeHead(200).end('ok');
    });
  });
  redirector = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(302, { location: `http://127.0.0.1:${receiverPort}/hooks/after-redirect` }).end(),
    );
  });
  receiverPort = await listen(receiver);
  redirectorPort = await listen(redirector);
  h = await startHarness({ resolve });
  await h.setClock(`${TODAY}T12:00:00+02:00`);
});
afterAll(async () => {
  await h?.close();
  await Promise.all([receiver, redirector].map((s) => new Promise((r) => s?.close(r))));
});

describe('setting a webhook URL (sandbox)', () => {
  it('refuses an IP literal that is neither public unicast nor loopback, with the JSON error shape', async () => {
    for (const [url, named] of [
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is not (linkLocal)'],
      ['http://10.0.0.5/hook', '10.0.0.5 is not (private)'],
      ['https://[fd00::1]/hook', 'fd00::1 is not (uniqueLocal)'],
      ['http://198.18.0.1/hook', '198.18.0.1 is not (reserved)'],
      ['http://[64:ff9b::a00:5]/hook', '64:ff9b::a00:5 is not (rfc6052)'],
      ['http://[::7f00:1]/hook', '::7f00:1 is not (outside 2000::/3)'],
    ]) {
      const created = await h.admin('POST', '/admin/partners', { name: 'SSRF', webhook_url: url });
      expect({ url, status: created.status, body: created.body }).toEqual({
        url,
        status: 400,
        body: {
          statusCode: 400,
          error: expect.any(String),
          message: `webhook_url must point at a public address; ${named}`,
        },
      });
      const patched = await h.admin('PATCH', '/admin/partners/demo', { webhook_url: url });
      expect({ url, status: patched.status, message: patched.body.message }).toEqual({
        url,
        status: 400,
        message: `webhook_url must point at a public address; ${named}`,
      });
    }
    expect(
      (await h.admin<{ webhook_url: string | null }>('GET', '/admin/partners/demo')).body.webhook_url,
    ).toBe(null);
  });

  it('takes loopback and host names (these are checked at delivery)', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'https://rebind.example/hook']) {
      const created = await h.admin('POST', '/admin/partners', { name: 'Fine', webhook_url: url });
      expect({ url, status: created.status }).toEqual({ url, status: 201 });
    }
  });
});

describe('delivering a webhook', () => {
  let p: Creds;
  let orderId: string;

  /** Points the partner at `url`, has the operator re-send, and answers the recorded attempt. */
  async function resendTo(url: string) {
    const patched = await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_url: url });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    lookups.length = 0;
    const before = hits.length;
    const res = await h.admin<{ httpStatus: number | null; error: string | null }>(
      'POST',
      `/admin/orders/${orderId}/webhook`,
    );
    expect(res.status).toBe(200);
    const d = await h.admin<{
      webhook_attempts: { url: string; http_status: number | null; error: string | null }[];
    }>('GET', `/admin/orders/${orderId}`);
    const last = d.body.webhook_attempts.at(-1)!;
    expect(last).toMatchObject({ url, http_status: res.body.httpStatus, error: res.body.error });
    const { httpStatus, error } = res.body;
    return { httpStatus, error, lookups: [...lookups], hits: hits.slice(before) };
  }

  beforeAll(async () => {
    p = await h.newPartner({ name: 'Guarded partner' });
    const created = await h.call<{ id: string; price: number }>(
      'create-order',
      { customer: { phone: '+37369000000' }, products: [rcaItem(TODAY)] },
      p,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    orderId = created.body.id;
    const paid = await h.call(
      'confirm-order',
      { id: orderId, payment: payment(created.body.price, { paid_at: await h.service.svc.clock.now() }) },
      p,
    );
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    // Completed with no webhook URL: no event, so no delivery of its own meets the URLs set below.
    await h.waitForStatus(orderId, 'completed', { creds: p });
  });

  it('delivers to a name that resolves to loopback in the sandbox, resolving it once', async () => {
    const r = await resendTo(`http://hooks.test:${receiverPort}/hooks/polita`);
    expect(r).toEqual({
      httpStatus: 200,
      error: null,
      lookups: ['hooks.test'],
      hits: [`hooks.test:${receiverPort} /hooks/polita {"orderId":"${orderId}","status":"completed"}`],
    });
  });

  it('refuses, before connecting, a name that resolves to an address that is not public', async () => {
    for (const [host, address] of [
      ['rebind.example', '10.0.0.5'],
      ['metadata.example', '169.254.169.254'],
      ['mixed.example', '10.0.0.5'],
      ['ula.example', 'fd00::1'],
      ['mapped.example', '::ffff:a00:5'],
      ['compat.example', '::7f00:1'],
    ]) {
      const r = await resendTo(`http://${host}:${receiverPort}/hook`);
      expect({ host, ...r }).toEqual({
        host,
        httpStatus: null,
        error: `webhook host ${host} resolves to ${address}, which is not a public address`,
        lookups: [host],
        hits: [],
      });
    }
  });

  it('connects to the address it checked: a second answer of the resolver is never used (DNS rebinding)', async () => {
    // First answer the receiver's address; a second resolution would get 127.0.0.2, where nothing listens.
    flip = [['127.0.0.1'], ['127.0.0.2']];
    const r = await resendTo(`http://flip.test:${receiverPort}/hooks/flip`);
    expect(r).toMatchObject({ httpStatus: 200, error: null, lookups: ['flip.test'] });
    expect(r.hits).toHaveLength(1);
    // The other way round: the first answer is refused and nothing is connected to.
    flip = [['10.0.0.5'], ['127.0.0.1']];
    const refused = await resendTo(`http://flip.test:${receiverPort}/hooks/flip`);
    expect(refused).toEqual({
      httpStatus: null,
      error: `webhook host flip.test resolves to 10.0.0.5, which is not a public address`,
      lookups: ['flip.test'],
      hits: [],
    });
  });

  it('records an unknown name as a failed attempt', async () => {
    const r = await resendTo(`http://nowhere.example:${receiverPort}/hook`);
    expect(r).toMatchObject({
      httpStatus: null,
      error: expect.stringMatching(/ENOTFOUND nowhere\.example/),
      hits: [],
    });
  });

  it('does not follow a redirect: the 302 is the failed attempt, and the target is never hit', async () => {
    const r = await resendTo(`http://127.0.0.1:${redirectorPort}/hooks/moved`);
    expect(r).toEqual({ httpStatus: 302, error: 'expected 2xx, got 302', lookups: [], hits: [] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hits.filter((x) => x.includes('after-redirect'))).toEqual([]);
  });

  it('outside the sandbox refuses a name resolving to loopback, and a loopback literal stored earlier', async () => {
    // The same order, delivered by services configured as production (no sandbox): loopback is
    // refused like any other address that is not public, before any connection.
    const production = { ...h.service.svc, config: { ...h.service.svc.config, sandbox: false } };
    await h.admin('PATCH', `/admin/partners/${p.id}`, {
      webhook_url: `http://hooks.test:${receiverPort}/hook`,
    });
    const before = hits.length;
    expect(await resendOrderEvent(production, SYSTEM_ACTOR, orderId)).toMatchObject({
      httpStatus: null,
      error: 'webhook host hooks.test resolves to 127.0.0.1, which is not a public address',
    });
    await h.admin('PATCH', `/admin/partners/${p.id}`, {
      webhook_url: `http://127.0.0.1:${receiverPort}/hook`,
    });
    expect(await resendOrderEvent(production, SYSTEM_ACTOR, orderId)).toMatchObject({
      httpStatus: null,
      error: 'webhook host 127.0.0.1 is not a public address',
    });
    expect(hits.length).toBe(before);
  });
});
