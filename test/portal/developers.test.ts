import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { get, portalUser, post, startReceiver, type Signed } from './support.ts';

/**
 * Developers in the portal: the secret's rotation with its 24 h overlap (decision 0040), the webhook
 * URL under the operator's rule (decision 0016), a test event to a receiver on 127.0.0.1, the last
 * deliveries and a re-send; each in the audit log with the user and the partner.
 */
let h: Harness;
let partner: Creds;
let developer: Signed;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  h = await startHarness();
  partner = await h.newPartner({ name: 'Agenția Nord' });
  developer = await portalUser(h, partner.id, 'developer');
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const balance = async (c: Creds) => (await h.call('get-balance', {}, c)).status;
const alertOf = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1];
const lastAudit = async () =>
  (await h.admin<{ entries: Record<string, unknown>[] }>('GET', `/admin/audit?target=${partner.id}`)).body
    .entries[0];

describe('the secret', () => {
  it('rotates (shown once): both secrets sign until the old one is retired', async () => {
    const page = await get(h, '/portal/developers', developer.cookie);
    expect(page.body).toContain(`<code id="partner-id">${partner.id}</code>`);
    expect(page.body).not.toContain('Retire old secret');

    const rotated = await post(h, '/portal/developers/secrets', developer.cookie);
    expect(rotated.statusCode).toBe(201);
    const secret = /<code id="secret" class="secret">([0-9a-f]{64})<\/code>/.exec(rotated.body)![1]!;
    const fresh = { id: partner.id, secret };
    expect(await balance(partner)).toBe(200);
    expect(await balance(fresh)).toBe(200);
    expect(await lastAudit()).toMatchObject({
      action: 'partner.rotate_secret',
      actor: `portal:${partner.id}:${developer.email}`,
      role: 'developer',
      via: 'portal',
    });
    // Never in the page again.
    const after = await get(h, '/portal/developers', developer.cookie);
    expect(after.body).not.toContain(secret);
    expect(after.body).toMatch(/the previous one works until \d\d\/\d\d\/\d{4}, \d\d:\d\d:\d\d/);

    const retired = await post(h, '/portal/developers/secrets/retire', developer.cookie);
    expect(retired.statusCode).toBe(303);
    expect(retired.headers.location).toBe('/portal/developers?done=retired');
    expect(await balance(partner)).toBe(403);
    expect(await balance(fresh)).toBe(200);
    expect(await lastAudit()).toMatchObject({ action: 'partner.retire_old_secrets', via: 'portal' });
    partner = fresh;
  });
});

describe('the webhook', () => {
  it('refuses a URL the operator’s rule refuses, keeping what was typed, and changes nothing', async () => {
    const cases: [string, string][] = [
      ['ftp://hooks.example/x', 'The webhook URL must start with http:// or https://.'],
      [
        'http://10.0.0.1/hook',
        'The webhook URL must point at a public address on the internet; 10.0.0.1 is not one.',
      ],
      ['not a url', 'The webhook URL must be a whole address, like https://example.com/polita.'],
    ];
    for (const [url, reason] of cases) {
      const res = await post(h, '/portal/developers/webhook', developer.cookie, { webhook_url: url });
      expect(res.statusCode, url).toBe(400);
      expect(alertOf(res.body)).toBe(reason);
      expect(res.body).toContain(`value="${url}"`);
    }
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body.webhook_url).toBeNull();
  });

  it('saves the URL and events, sends a test event to it, and lists and re-sends deliveries', async () => {
    const saved = await post(h, '/portal/developers/webhook', developer.cookie, {
      webhook_url: receiver.url,
      events: ['failed', 'refunded'],
    });
    expect(saved.statusCode).toBe(303);
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body).toMatchObject({
      webhook_url: receiver.url,
      webhook_events: ['completed', 'failed', 'refunded'],
    });
    expect(await lastAudit()).toMatchObject({ action: 'partner.change', via: 'portal' });

    const test = await post(h, '/portal/developers/webhook-test', developer.cookie);
    expect(test.statusCode).toBe(200);
    expect(test.body).toContain('The test event was delivered.');
    expect(receiver.received.at(-1)!.body).toBe('{"orderId":"TST000000TST","status":"test"}');
    expect(await lastAudit()).toMatchObject({ action: 'partner.webhook_test', via: 'portal' });

    const id = await paidRcaOrder(h, partner, localDate(await h.service.svc.clock.now()));
    await h.waitForStatus(id, 'completed', { creds: partner });
    await expect
      .poll(() => receiver.received.some((r) => r.body.includes(id)), { timeout: 15_000 })
      .toBe(true);
    await expect
      .poll(
        async () =>
          (await get(h, '/portal/developers', developer.cookie)).body.includes(`/portal/orders/${id}/resend`),
        {
          timeout: 5000,
        },
      )
      .toBe(true);
    const page = await get(h, '/portal/developers', developer.cookie);
    const row = page.body.slice(page.body.indexOf('id="deliveries"'));
    expect(row).toContain(`<a href="/portal/orders/${id}">${id}</a>`);
    expect(row).toContain('<td>delivered</td>');

    const before = receiver.received.length;
    const resent = await post(h, `/portal/orders/${id}/resend`, developer.cookie, { return: 'developers' });
    expect(resent.statusCode).toBe(303);
    expect(resent.headers.location).toBe('/portal/developers?done=resend-delivered#deliveries');
    expect(receiver.received.length).toBe(before + 1);
  });
});

describe('who may', () => {
  it('refuses Developers and its actions to a cashier and an accountant (403), changing nothing', async () => {
    for (const role of ['cashier', 'accountant']) {
      const u = await portalUser(h, partner.id, role);
      const page = await get(h, '/portal/developers', u.cookie);
      expect(page.statusCode).toBe(403);
      expect(alertOf(page.body)).toBe(
        `Developers is not for your role (${role}). Ask an owner of your account.`,
      );
      expect(page.body).not.toContain('href="/portal/developers"');
      for (const action of ['secrets', 'secrets/retire', 'webhook', 'webhook-test']) {
        expect(
          (await post(h, `/portal/developers/${action}`, u.cookie, { webhook_url: '' })).statusCode,
          action,
        ).toBe(403);
      }
    }
    expect(await balance(partner)).toBe(200);
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body).toMatchObject({
      webhook_url: receiver.url,
      active_secrets: 1,
    });
  });
});

describe('request signatures', () => {
  it('switches the partner to timestamped signatures and back (decision 0045), in the audit log', async () => {
    // A partner made on the contract's header (new partners require timestamped ones: decision 0084).
    await h.admin('PATCH', `/admin/partners/${partner.id}`, { require_timestamped_signature: false });
    const page = await get(h, '/portal/developers', developer.cookie);
    expect(page.body).toContain('timestamped signatures or X-Hmac-Signature');
    const on = await post(h, '/portal/developers/signatures', developer.cookie, { require: 'true' });
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe('/portal/developers?done=timestamped-required#signatures');
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body.require_timestamped_signature).toBe(
      true,
    );
    expect(await lastAudit()).toMatchObject({
      action: 'partner.change',
      after: { require_timestamped_signature: true },
      role: 'developer',
      via: 'portal',
    });
    const shown = await get(h, '/portal/developers?done=timestamped-required', developer.cookie);
    expect(shown.body).toContain('timestamped signatures only');
    const off = await post(h, '/portal/developers/signatures', developer.cookie, { require: 'false' });
    expect(off.statusCode).toBe(303);
    expect((await h.admin('GET', `/admin/partners/${partner.id}`)).body.require_timestamped_signature).toBe(
      false,
    );
    expect(
      (await post(h, '/portal/developers/signatures', developer.cookie, { require: 'maybe' })).statusCode,
    ).toBe(400);
  });
});
