import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_THREADS, passwordWork, verifyPassword } from '../../src/app/portal/password.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { FORM, form, invite, portalUser, signIn } from '../portal/support.ts';

/**
 * Third security round, findings 2 and 3 (decision 0085): password work is bounded, after every
 * lookup, on threads of its own; and each sign-in attempt is counted before its hash.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(async () => h?.close());

const acceptAt = (path: string, password: string, remoteAddress = '127.0.0.1') =>
  h.service.app.inject({
    method: 'POST',
    url: path,
    headers: FORM,
    remoteAddress,
    payload: form({ password }),
  });

describe('finding 3: 40 wrong passwords at once, then the right one, signed in', () => {
  it('counts every attempt before its hash: the right password after the burst is refused with 429', async () => {
    const p = await h.newPartner();
    const user = await portalUser(h, p.id, 'owner', 'burst@example.com');
    const address = '10.45.3.1';
    const before = passwordWork().started;
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(h, user.email, `wrong password number ${i}`, address)),
    );
    const statuses = burst.map((b) => b.res.statusCode);
    // PORTAL_SIGN_IN_FAILURES_PER_EMAIL (5): five are checked, the other 35 refused unhashed.
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
    expect(passwordWork().started - before).toBe(5);
    const right = await signIn(h, user.email, 'correct horse battery staple 42', address);
    expect(right.res.statusCode).toBe(429);
    expect(right.cookie).toBe('');
    // From another address the owner still signs in.
    expect((await signIn(h, user.email, 'correct horse battery staple 42', '10.45.3.2')).res.statusCode).toBe(
      303,
    );
  });
});

describe('finding 2: invitation tokens cost a password hash', () => {
  it('a made-up invitation token is refused (404) without hashing the password', async () => {
    const before = passwordWork().started;
    for (let i = 0; i < 5; i++) {
      const token = randomBytes(32).toString('base64url');
      const res = await acceptAt(
        `/portal/invitations/${token}`,
        'correct horse battery staple 42',
        '10.45.4.1',
      );
      expect(res.statusCode).toBe(404);
    }
    expect(passwordWork().started - before).toBe(0);
  });

  it('a stream of made-up tokens from one address is limited like sign-ins (429)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const token = randomBytes(32).toString('base64url');
      statuses.push((await acceptAt(`/portal/invitations/${token}`, 'x', '10.45.4.2')).statusCode);
    }
    expect(statuses.slice(0, 20).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
  });

  it('a real invitation still works, from an address that failed a few times', async () => {
    const p = await h.newPartner();
    const { path } = await invite(h, p.id, 'invited@example.com', 'cashier');
    const token = randomBytes(32).toString('base64url');
    expect((await acceptAt(`/portal/invitations/${token}`, 'x', '10.45.4.3')).statusCode).toBe(404);
    expect((await acceptAt(path, 'correct horse battery staple 42', '10.45.4.3')).statusCode).toBe(303);
  });

  it('hashes run on at most one thread a CPU, and never hold up a DNS lookup', async () => {
    const hashes = Array.from({ length: 4 * PASSWORD_THREADS + 4 }, () =>
      verifyPassword('correct horse battery staple 42', undefined),
    );
    let done = 0;
    for (const hsh of hashes) void hsh.then(() => done++);
    // getaddrinfo runs on libuv's threads, where Node's own async scrypt ran: behind every hash.
    await lookup('localhost');
    expect(done).toBeLessThan(hashes.length / 2);
    expect(passwordWork().threads).toBeLessThanOrEqual(PASSWORD_THREADS);
    await Promise.all(hashes);
  });
});

describe('finding 5: password1234, aaaaaaaaaaaa and 123456789012 accepted', () => {
  it('refuses weak passwords of 12 characters, saying why, and leaves the link usable', async () => {
    const p = await h.newPartner();
    const { path } = await invite(h, p.id, 'weak@example.com', 'developer');
    for (const weak of ['password1234', 'aaaaaaaaaaaa', '123456789012', 'weak@example.com']) {
      const res = await acceptAt(path, weak, '10.45.5.1');
      expect(res.statusCode, weak).toBe(400);
      expect(res.body).toContain('would be guessed too easily');
    }
    expect((await acceptAt(path, 'river-blue-cactus-9 lamp', '10.45.5.1')).statusCode).toBe(303);
  });
});
