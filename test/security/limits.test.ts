import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { banner } from '../../src/banner.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';

/**
 * Limits that never lock out a valid credential, and the operators' tokens (decisions 0046, 0047):
 * findings 3, 4, 6 and 7 of the second security round.
 */
const PROXY = '127.0.0.3';
let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness({
    env: {
      AUTH_FAILURES_PER_MINUTE: '3',
      ADMIN_AUTH_FAILURES_PER_MINUTE: '3',
      TRUST_PROXY: `${PROXY},10.0.0.0/8`,
      MAX_CONNECTIONS_PER_IP: '5',
    },
  });
  base = await h.listen();
});
afterAll(async () => h?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Counts live in whole-minute windows: a test that ran across a minute's end would see them restart. */
beforeEach(async () => {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await sleep(left + 100);
});

/** get-balance as `creds` from `address` (the peer), optionally through a proxy's X-Forwarded-For. */
async function balance(creds: Creds, o: { address: string; forwardedFor?: string; bad?: boolean }) {
  const res = await h.service.app.inject({
    method: 'POST',
    url: '/v1/get-balance',
    remoteAddress: o.address,
    headers: {
      'content-type': 'application/json',
      ...(o.bad
        ? { 'x-hmac-signature': `${creds.id}:${'0'.repeat(128)}` }
        : { 'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, 'get-balance', '{}') }),
      ...(o.forwardedFor ? { 'x-forwarded-for': o.forwardedFor } : {}),
    },
    payload: '{}',
  });
  return res;
}

describe('finding 3: failed authentications lock out correctly signed requests from the same address', () => {
  it('past AUTH_FAILURES_PER_MINUTE only failing attempts get 429; a signed request is served', async () => {
    const p = await h.newPartner();
    const address = '203.0.113.30';
    for (let i = 0; i < 3; i++) expect((await balance(p, { address, bad: true })).statusCode).toBe(403);
    const unsigned = await h.service.app.inject({
      method: 'POST',
      url: '/v1/get-balance',
      remoteAddress: address,
      payload: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(unsigned.statusCode).toBe(429);
    expect((await balance(p, { address, bad: true })).statusCode).toBe(429);
    expect((await balance(p, { address })).statusCode).toBe(200);
    expect((await balance(h.demo, { address })).statusCode).toBe(200);
  });

  it('behind a trusted proxy each client is counted by its own address, and the proxy never is', async () => {
    const p = await h.newPartner();
    const attacker = '198.51.100.66';
    for (let i = 0; i < 4; i++) await balance(p, { address: PROXY, forwardedFor: attacker, bad: true });
    expect((await balance(p, { address: PROXY, forwardedFor: attacker, bad: true })).statusCode).toBe(429);
    // Another client behind the same load balancer is not limited, nor is a chain of proxies.
    expect((await balance(p, { address: PROXY, forwardedFor: '198.51.100.67', bad: true })).statusCode).toBe(
      403,
    );
    expect((await balance(p, { address: PROXY, forwardedFor: `198.51.100.68, 10.1.2.3` })).statusCode).toBe(
      200,
    );
    // The right-most entry that is not a trusted proxy is the client: a forged left part changes nothing.
    expect(
      (await balance(p, { address: PROXY, forwardedFor: `192.0.2.1, ${attacker}`, bad: true })).statusCode,
    ).toBe(429);
  });

  it('an untrusted peer’s X-Forwarded-For is ignored: it is counted by its own address', async () => {
    const p = await h.newPartner();
    const peer = '203.0.113.31';
    for (let i = 0; i < 3; i++)
      await balance(p, { address: peer, forwardedFor: `198.51.100.${100 + i}`, bad: true });
    expect((await balance(p, { address: peer, forwardedFor: '198.51.100.200', bad: true })).statusCode).toBe(
      429,
    );
  });
});

describe('finding 4: one client address can take every connection', () => {
  it('past MAX_CONNECTIONS_PER_IP a new connection from that address is closed; others are served', async () => {
    const { port } = new URL(base);
    const open = (localAddress: string) =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port: Number(port), localAddress }, () => {
          s.write('G'); // one byte of a request that never ends
          resolve(s);
        });
        s.once('error', reject);
      });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 5; i++) held.push(await open('127.0.0.1'));
      const sixth = await open('127.0.0.1');
      held.push(sixth);
      await new Promise<void>((resolve) =>
        sixth.destroyed ? resolve() : sixth.once('close', () => resolve()),
      );
      expect(held.slice(0, 5).every((s) => !s.destroyed)).toBe(true);
      // Another address is served at once.
      const other = await fetchFrom('127.0.0.2', `${base}/healthz`);
      expect(other).toBe(200);
      // A trusted proxy is not capped: it carries many clients.
      for (let i = 0; i < 7; i++) held.push(await open(PROXY));
      await sleep(200);
      expect(held.slice(-7).every((s) => !s.destroyed)).toBe(true);
    } finally {
      for (const s of held) s.destroy();
    }
  });
});

/** A GET from a given local address (raw HTTP/1.1 on a socket): the status code. */
function fetchFrom(localAddress: string, url: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port), localAddress }, () =>
      s.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    s.on('data', (d: Buffer) => (text += d.toString()));
    s.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    s.on('error', reject);
  });
}

describe('finding 6: wrong operator tokens are neither limited nor audited; short tokens accepted', () => {
  const WRONG = 'not-the-admin-token-but-long-enough';
  const admin = (address: string, token: string, url = '/admin/settings') =>
    h.service.app.inject({
      method: 'GET',
      url,
      remoteAddress: address,
      headers: { authorization: `Bearer ${token}` },
    });

  it('/admin: past ADMIN_AUTH_FAILURES_PER_MINUTE wrong tokens get 429, the right one still works', async () => {
    const address = '203.0.113.40';
    for (let i = 0; i < 3; i++) expect((await admin(address, WRONG)).statusCode).toBe(403);
    const limited = await admin(address, WRONG);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json().message).toMatch(
      /^Too many wrong operator tokens from this address; retry after \d+ s$/,
    );
    for (let i = 0; i < 5; i++) expect((await admin(address, WRONG)).statusCode).toBe(429);
    expect((await admin(address, h.adminToken)).statusCode).toBe(200);
    // Each failure is audited (address, route, time; never the token) up to the limit, then once.
    const audit = await h.admin<{
      entries: { action: string; after: Record<string, unknown>; role: string }[];
    }>('GET', `/admin/audit?target=${address}`);
    const actions = audit.body.entries.map((e) => e.action).sort();
    expect(actions).toEqual([
      'operator.auth_failed',
      'operator.auth_failed',
      'operator.auth_failed',
      'operator.auth_limited',
    ]);
    expect(audit.body.entries[0]!.after).toMatchObject({ address, route: '/admin/settings', method: 'GET' });
    expect(JSON.stringify(audit.body)).not.toContain(WRONG);
  });

  it('/metrics and the console sign-in are limited the same way per address', async () => {
    const address = '203.0.113.41';
    for (let i = 0; i < 3; i++) expect((await admin(address, WRONG, '/metrics')).statusCode).toBe(403);
    expect((await admin(address, WRONG, '/metrics')).statusCode).toBe(429);
    expect((await admin(address, h.adminToken, '/metrics')).statusCode).toBe(200);
    const signIn = (token: string) =>
      h.service.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        remoteAddress: '203.0.113.42',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token }).toString(),
      });
    for (let i = 0; i < 3; i++) expect((await signIn(WRONG)).statusCode).toBe(401);
    const limited = await signIn(WRONG);
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toContain('Too many wrong tokens from this address');
    expect((await signIn(h.adminToken)).statusCode).toBe(303);
  });

  it('outside the sandbox an operator token shorter than 32 characters stops the start', () => {
    const env = { SANDBOX: 'false', SECRET_KEY: 'ab'.repeat(32) };
    expect(() => loadConfig({ ...env, ADMIN_TOKEN: 'adminadminadmin1' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, ADMIN_TOKEN: 'adminadminadmin1' })).toThrow(
      /ADMIN_TOKEN must be at least 32 characters when SANDBOX=false, got 16/,
    );
    expect(loadConfig({ ...env, ADMIN_TOKEN: 'a'.repeat(32) }).adminToken).toBe('a'.repeat(32));
    // The sandbox keeps its 16.
    expect(loadConfig({ ADMIN_TOKEN: 'adminadminadmin1' }).adminToken).toBe('adminadminadmin1');
  });

  it('TRUST_PROXY takes addresses and CIDRs only', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,::1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      '::1',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: 'loadbalancer' })).toThrow(
      /TRUST_PROXY must be .* not "loadbalancer"/,
    );
  });
});

describe('finding 7: the start-up banner prints the admin token outside the sandbox', () => {
  it('prints it in the sandbox only', () => {
    const token = 'x'.repeat(40);
    const service = {
      database: { embedded: false, connectionString: 'postgres://polita@db/polita' },
      secretKey: 'SECRET_KEY',
      adminToken: token,
      demo: null,
    } as unknown as Parameters<typeof banner>[1];
    const production = loadConfig({ SANDBOX: 'false', ADMIN_TOKEN: token, SECRET_KEY: 'ab'.repeat(32) });
    expect(banner(production, service)).not.toContain(token);
    expect(banner(production, service)).toContain(
      'Admin token:   ADMIN_TOKEN (not printed outside the sandbox)',
    );
    expect(banner(loadConfig({ ADMIN_TOKEN: token }), service)).toContain(token);
  });
});
