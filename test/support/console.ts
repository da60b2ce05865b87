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

/** A started service (a fresh one unless given) and the cookie header of its admin's console session. */
export async function signedInConsole(started: Promise<Harness> = startHarness()) {
  const h = await started;
  return { h, cookie: await consoleCookie(h) };
}
