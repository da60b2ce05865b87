import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Harness } from '../support/harness.ts';

/**
 * Talking to the portal through the real service (inject), as a browser without JavaScript would,
 * one whose user reads English (the portal's default is Romanian: test/portal/languages.test.ts).
 */
export const ENGLISH = { 'accept-language': 'en' };
export const FORM = { 'content-type': 'application/x-www-form-urlencoded', ...ENGLISH };
export const form = (fields: Record<string, string | string[]>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) q.append(k, x);
  return q.toString();
};

/** A password no list holds. */
export const PASSWORD = 'correct horse battery staple 42';

export interface Signed {
  cookie: string;
  email: string;
  userId: string;
  partnerId: string;
}

/** The cookie header of the portal session a response opened, or '' when it opened none. */
export function sessionCookie(res: { cookies: { name: string; value: string }[] }): string {
  const c = res.cookies.find((x) => x.name === 'polita_portal' && x.value);
  return c ? `polita_portal=${c.value}` : '';
}

export async function invite(h: Harness, partnerId: string, email: string, role: string) {
  const res = await h.admin<{ id: string; invitation_url: string }>(
    'POST',
    `/admin/partners/${partnerId}/users`,
    {
      email,
      role,
    },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { userId: res.body.id, path: new URL(res.body.invitation_url).pathname };
}

/** Invites a user and accepts the invitation with `password`: a signed-in user. */
export async function portalUser(
  h: Harness,
  partnerId: string,
  role: string,
  email = `${role}-${Math.random().toString(36).slice(2, 8)}@${partnerId}.example`,
  password = PASSWORD,
): Promise<Signed> {
  const { userId, path } = await invite(h, partnerId, email, role);
  const res = await h.service.app.inject({
    method: 'POST',
    url: path,
    headers: FORM,
    payload: form({ password }),
  });
  expect(res.statusCode, res.body).toBe(303);
  return { cookie: sessionCookie(res), email, userId, partnerId };
}

export const get = (h: Harness, url: string, cookie = '', headers: Record<string, string> = {}) =>
  h.service.app.inject({
    method: 'GET',
    url,
    headers: { ...ENGLISH, ...(cookie ? { cookie } : {}), ...headers },
  });

/** The CSRF token the session's pages hand their forms. */
export async function csrfOf(h: Harness, cookie: string, page = '/portal/orders'): Promise<string> {
  const res = await get(h, page, cookie);
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
  if (!token) throw new Error(`no CSRF token on ${page} (${res.statusCode})`);
  return token;
}

/** A form POST as the session's own page sends it (with its CSRF token unless given). */
export async function post(
  h: Harness,
  url: string,
  cookie: string,
  fields: Record<string, string | string[]> = {},
  headers: Record<string, string> = {},
) {
  const _csrf = fields._csrf ?? (cookie ? await csrfOf(h, cookie) : '');
  return h.service.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, ...(cookie ? { cookie } : {}), ...headers },
    payload: form({ ...fields, _csrf }),
  });
}

export async function signIn(h: Harness, email: string, password: string, remoteAddress = '127.0.0.1') {
  const res = await h.service.app.inject({
    method: 'POST',
    url: '/portal/sign-in',
    headers: FORM,
    remoteAddress,
    payload: form({ email, password }),
  });
  return { res, cookie: sessionCookie(res) };
}

/** A webhook receiver on a free loopback port: records each delivery, answers `status` (200 by default). */
export async function startReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(state.status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/polita`,
    received,
    answer: (status: number) => (state.status = status),
    close: () => new Promise((r) => server.close(r)),
  };
}
