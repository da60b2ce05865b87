import { expect } from 'vitest';
import { startHarness, type Harness } from './harness.ts';

/** Signs in to the console with `token` (the service's admin token unless told); answers the session cookie header. */
export async function consoleCookie(h: Harness, token = h.adminToken): Promise<string> {
  const res = await h.service.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token }).toString(),
  });
  expect(res.statusCode).toBe(303);
  return `polita_console=${res.cookies.find((c) => c.name === 'polita_console')!.value}`;
}

/**
 * A console session of `token` as a browser holds it (the session and CSRF cookies, and the token
 * its forms send): answers a function that posts an empty form of that session to a console URL.
 */
export async function consoleFormPoster(h: Harness, token = h.adminToken) {
  const session = await consoleCookie(h, token);
  const page = await h.service.app.inject({
    method: 'GET',
    url: '/console/settings',
    headers: { cookie: session },
  });
  const cookie = `${session}; polita_csrf=${page.cookies.find((c) => c.name === 'polita_csrf')!.value}`;
  const again = await h.service.app.inject({ method: 'GET', url: '/console/settings', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(again.body)![1]!;
  return (url: string) =>
    h.service.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
}

/** A started service (a fresh one unless given) and the cookie header of its admin's console session. */
export async function signedInConsole(started: Promise<Harness> = startHarness()) {
  const h = await started;
  return { h, cookie: await consoleCookie(h) };
}
