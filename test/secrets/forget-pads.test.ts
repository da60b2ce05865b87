import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCachedPads } from '../../src/signature.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * The HMAC pads of a partner's secrets are as good as the secrets: once an operator changes the
 * partner (a rotation, disabling it), the pads its cached secrets left behind are dropped.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
}, 60_000);
afterAll(() => h?.close());

const signedCall = (creds: { id: string; secret: string }) =>
  h.call('get-offers', { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' }, creds);

describe("a partner's cached HMAC pads", () => {
  it('are dropped when the operator rotates its secret', async () => {
    const p = await h.newPartner();
    expect((await signedCall(p)).status).toBe(200);
    expect(hasCachedPads(p.secret)).toBe(true);
    const rotated = await h.admin<{ secret: string }>('POST', `/admin/partners/${p.id}/secrets`);
    expect(rotated.status).toBe(201);
    expect(hasCachedPads(p.secret)).toBe(false);
    // The old secret stays valid during the rotation: signing with it caches its pads again.
    expect((await signedCall(p)).status).toBe(200);
    expect(hasCachedPads(p.secret)).toBe(true);
  });

  it('are dropped when the operator disables the partner', async () => {
    const p = await h.newPartner();
    expect((await signedCall(p)).status).toBe(200);
    expect(hasCachedPads(p.secret)).toBe(true);
    expect((await h.admin('PATCH', `/admin/partners/${p.id}`, { disabled: true })).status).toBe(200);
    expect(hasCachedPads(p.secret)).toBe(false);
  });
});
