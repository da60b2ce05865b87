import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { get, signIn } from './support.ts';

/**
 * The sandbox's demo owner (decision 0037): made on first start, its password printed at every start
 * from DATA_DIR/demo-owner-password, only its hash in the database; it opens the whole portal.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const owner = () => h.service.demo!.owner!;

describe('the demo owner', () => {
  it('signs in to the demo partner’s portal and sees Sell, Orders, Wallet, Developers and Team', async () => {
    expect(owner().email).toBe('owner@demo.example');
    expect(owner().password).toMatch(/^[\w-]{24}$/);
    const { res, cookie } = await signIn(h, owner().email, owner().password);
    expect(res.statusCode).toBe(303);
    const page = await get(h, '/portal/orders', cookie);
    const nav = page.body.slice(page.body.indexOf('<nav aria-label="Portal">'), page.body.indexOf('</nav>'));
    expect([...nav.matchAll(/<a href="[^"]+"[^>]*>([^<]+)<\/a>/g)].map((m) => m[1])).toEqual([
      'Sell',
      'Orders',
      'Wallet',
      'Developers',
      'Team',
    ]);
    expect(page.body).toContain('Demo Partner');
    expect(page.body).toContain('owner@demo.example <span class="role">(owner)</span>');
  });

  it('keeps its password in DATA_DIR only (0600), the same at every start; a lost file gives a new one', async () => {
    const file = join(h.dataDir, 'demo-owner-password');
    expect(readFileSync(file, 'utf8')).toBe(`${owner().password}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = await sql<{ password_hash: string }>`
      select password_hash from portal_users where email = 'owner@demo.example'`.execute(h.service.svc.db);
    expect(stored.rows[0]!.password_hash).toMatch(/^scrypt\$/);
    expect(stored.rows[0]!.password_hash).not.toContain(owner().password);

    const first = owner().password;
    await h.restart();
    expect(owner().password).toBe(first);

    rmSync(file);
    await h.restart();
    expect(owner().password).not.toBe(first);
    expect((await signIn(h, owner().email, owner().password, '10.9.0.1')).res.statusCode).toBe(303);
    expect((await signIn(h, owner().email, first, '10.9.0.2')).res.statusCode).toBe(401);
  });
});
