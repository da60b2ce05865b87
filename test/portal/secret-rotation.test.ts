import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';

/**
 * Secret rotation with its 24 h overlap (decision 0040), through the operator API: the previous
 * secret keeps working until it is retired or 24 h after the rotation, whichever comes first, judged
 * by the real clock; a rotation while two secrets are valid retires the older one first.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The status a signed get-balance answers with these credentials: 200, or 403 for a secret no longer valid. */
const balance = async (c: Creds) => (await h.call('get-balance', {}, c)).status;

async function rotate(partnerId: string): Promise<Creds> {
  const res = await h.admin<{ secret: string }>('POST', `/admin/partners/${partnerId}/secrets`);
  expect(res.status).toBe(201);
  return { id: partnerId, secret: res.body.secret };
}

/** Moves a partner's secrets' 24 h end to `msAgo` before now, as if the rotation were that old. */
async function ageOverlap(partnerId: string, msAgo: number): Promise<void> {
  await sql`update partner_secrets set retired_at = ${new Date(Date.now() - msAgo)}
            where partner_id = ${partnerId} and retired_at > now()`.execute(h.service.svc.db);
}

describe('a rotation', () => {
  it('leaves both secrets valid, and the old one stops when it is retired', async () => {
    const first = await h.newPartner();
    const second = await rotate(first.id);
    expect(second.secret).not.toBe(first.secret);
    expect(await balance(first)).toBe(200);
    expect(await balance(second)).toBe(200);
    expect((await h.admin('GET', `/admin/partners/${first.id}`)).body.active_secrets).toBe(2);

    const retired = await h.admin('DELETE', `/admin/partners/${first.id}/secrets/old`);
    expect(retired.body).toEqual({ retired: 1 });
    expect(await balance(first)).toBe(403);
    expect(await balance(second)).toBe(200);
    expect((await h.admin('GET', `/admin/partners/${first.id}`)).body.active_secrets).toBe(1);
  });

  it('ends the old secret 24 h after the rotation, by the real clock', async () => {
    const first = await h.newPartner();
    const second = await rotate(first.id);
    const [row] = (
      await sql<{ retired_at: Date }>`select retired_at from partner_secrets
        where partner_id = ${first.id} and retired_at is not null`.execute(h.service.svc.db)
    ).rows;
    // Written at the rotation: 24 h from now.
    expect(Math.abs(row!.retired_at.getTime() - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);

    // Two days on the sandbox clock change nothing: the overlap is real time.
    await h.setClock(new Date(Date.now() + 2 * 86_400_000).toISOString());
    try {
      await new Promise((r) => setTimeout(r, 1100)); // past the partner cache's second
      expect(await balance(first)).toBe(200);
    } finally {
      await h.setClock(null);
    }

    // As if the rotation were 24 h and a second ago: the old secret no longer signs, the new one does.
    await ageOverlap(first.id, 1000);
    await expect.poll(() => balance(first), { timeout: 5000 }).toBe(403);
    expect(await balance(second)).toBe(200);
    expect((await h.admin('GET', `/admin/partners/${first.id}`)).body.active_secrets).toBe(1);
    // Nothing is left to retire.
    expect((await h.admin('DELETE', `/admin/partners/${first.id}/secrets/old`)).body).toEqual({ retired: 0 });
  });

  it('while two secrets are valid, retires the oldest first and keeps the one it replaces 24 h', async () => {
    const first = await h.newPartner();
    const second = await rotate(first.id);
    const third = await rotate(first.id);
    expect(await balance(first)).toBe(403);
    expect(await balance(second)).toBe(200);
    expect(await balance(third)).toBe(200);
    expect((await h.admin('GET', `/admin/partners/${first.id}`)).body.active_secrets).toBe(2);
  });
});
