import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { FORM, form, get, portalUser, post } from './support.ts';

/**
 * Portal actions in the operator's audit log (decision 0037): each with the user and the partner, in
 * `GET /admin/audit` and on the console's Audit page, never with a secret or a link.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('the audit log', () => {
  it('names the user and the partner of every portal change, in the API and on the console’s Audit page', async () => {
    const p = await h.newPartner({ name: 'Agenția Nord' });
    const owner = await portalUser(h, p.id, 'owner', 'ana@nord.example');
    const rotated = await post(h, '/portal/developers/secrets', owner.cookie);
    const secret = /<code id="secret" class="secret">([0-9a-f]{64})<\/code>/.exec(rotated.body)![1]!;
    await post(h, '/portal/developers/webhook', owner.cookie, {
      webhook_url: 'https://hooks.nord.example/polita',
    });
    const invited = await post(h, '/portal/team/users', owner.cookie, {
      email: 'ion@nord.example',
      role: 'cashier',
    });
    const link = /<code id="invitation-url" class="secret">([^<]+)<\/code>/.exec(invited.body)![1]!;

    const actor = `portal:${p.id}:ana@nord.example`;
    const audit = await h.admin<{ entries: Record<string, unknown>[] }>(
      'GET',
      `/admin/audit?actor=${encodeURIComponent(actor)}`,
    );
    expect(audit.body.entries.map((e) => e.action)).toEqual([
      'partner.invite_user',
      'partner.change',
      'partner.rotate_secret',
      'portal.accept_invitation',
    ]);
    for (const e of audit.body.entries)
      expect(e).toMatchObject({ actor, role: 'owner', via: 'portal', target: p.id });
    const text = JSON.stringify(audit.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(link.split('/').pop());

    // The console shows the same entries, with who and the partner in them.
    const signIn = await h.service.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: FORM,
      payload: form({ token: h.adminToken }),
    });
    const cookie = `polita_console=${signIn.cookies.find((c) => c.name === 'polita_console')!.value}`;
    const page = await get(h, `/console/audit?target=${p.id}`, cookie);
    expect(page.statusCode).toBe(200);
    const rows = [...page.body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
    const rotation = rows.find((r) => r.includes('partner.rotate_secret'))!;
    expect(rotation).toContain(`${actor} <span class="role">(owner)</span>`);
    expect(rotation).toContain('<td>portal</td>');
  });
});
