import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PARTNER_ID } from '../../src/app/seed-sandbox.ts';
import { signatureHeader, timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { credit, rcaDraft, rcaOffers } from '../wallet/support.ts';

/**
 * Third security round, finding 4 (decision 0084): every new partner starts with
 * `require_timestamped_signature` on, the sandbox's demo partner too, and a webhook's body is never
 * a valid request of the fixed-field endpoints.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(async () => h?.close());

const now = () => Math.floor(Date.now() / 1000);

async function send(endpoint: string, payload: string, headers: Record<string, string>) {
  const res = await h.service.app.inject({
    method: 'POST',
    url: `/v1/${endpoint}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload,
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}
const spec = (p: Creds, payload: string) => ({
  'x-hmac-signature': signatureHeader(p.id, p.secret, payload),
});
const stamped = (p: Creds, endpoint: string, payload: string, t = now()) => ({
  'x-polita-signature': timestampedSignatureHeader(p.id, p.secret, endpoint, payload, t),
});

describe('finding 4: new partners start without the timestamped signature', () => {
  it('a new partner requires it unless the operator says otherwise', async () => {
    const p = await h.newPartner();
    expect((await h.admin('GET', `/admin/partners/${p.id}`)).body.require_timestamped_signature).toBe(true);
    const refused = await send('get-balance', '{}', spec(p, '{}'));
    expect(refused).toEqual({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: 'Timestamped signature required' },
    });
    expect((await send('get-balance', '{}', stamped(p, 'get-balance', '{}'))).status).toBe(200);
    const asked = await h.newPartner({ require_timestamped_signature: false });
    expect((await send('get-balance', '{}', spec(asked, '{}'))).status).toBe(200);
  });

  it('a captured get-order signature of a new partner does not pay the order from the wallet', async () => {
    const p = await h.newPartner();
    await credit(h, p.id, 'online', 20_000);
    const draft = await rcaDraft(h, (await rcaOffers(h, p))[0]!, p);
    const body = JSON.stringify({ id: draft.id });
    for (const headers of [spec(p, body), stamped(p, 'get-order', body)]) {
      const paid = await send('pay-order-from-balance', body, headers);
      expect([401, 403]).toContain(paid.status);
    }
    const order = await send('get-order', body, stamped(p, 'get-order', body));
    expect(order.body.status).toBe('draft');
  });

  it('the sandbox demo partner is switched too', async () => {
    const demo = await h.admin('GET', `/admin/partners/${DEMO_PARTNER_ID}`);
    expect(demo.body.require_timestamped_signature).toBe(true);
    expect((await send('get-balance', '{}', spec(h.demo, '{}'))).status).toBe(401);
  });

  it('a demo partner made by an earlier version is switched once, and a later choice stands', async () => {
    await h.service.svc.db
      .updateTable('partners')
      .set({ require_timestamped_signature: false })
      .where('id', '=', 'demo')
      .execute();
    await h.service.svc.db
      .deleteFrom('settings')
      .where('key', '=', 'demo_partner_signatures_switched')
      .execute();
    await h.restart();
    expect((await h.admin('GET', '/admin/partners/demo')).body.require_timestamped_signature).toBe(true);
    await h.admin('PATCH', '/admin/partners/demo', { require_timestamped_signature: false });
    await h.restart();
    expect((await h.admin('GET', '/admin/partners/demo')).body.require_timestamped_signature).toBe(false);
    await h.admin('PATCH', '/admin/partners/demo', { require_timestamped_signature: true });
  });

  it('a t more than 300 s in the future is refused like one in the past', async () => {
    const p = await h.newPartner();
    // 302, not 301: the second can turn between this line and the check, which only narrows the gap.
    for (const t of [now() + 302, now() + 86_400, 999_999_999_999]) {
      const res = await send('get-balance', '{}', stamped(p, 'get-balance', '{}', t));
      expect(res.status, String(t)).toBe(401);
      expect(res.body.message).toBe('Signature timestamp outside the allowed window');
    }
  });
});

describe('finding 4: a captured webhook is accepted as a get-balance request', () => {
  it('the fixed-field bodies refuse the webhook fields, even for a partner left on the spec header', async () => {
    const p = await h.newPartner({ require_timestamped_signature: false });
    const webhook = JSON.stringify({ orderId: 'IAI000000AAA', status: 'completed' });
    for (const endpoint of ['get-balance', 'get-order', 'pay-order-from-balance']) {
      const res = await send(endpoint, webhook, spec(p, webhook));
      expect(res.status, endpoint).toBe(400);
      expect(res.body.message).toBe('body/orderId is not a field of this request');
    }
    const statusOnly = JSON.stringify({ status: 'test' });
    const res = await send('get-balance', statusOnly, spec(p, statusOnly));
    expect(res.body.message).toBe('body/status is not a field of this request');
    // Any other unknown field is still ignored, as the contract says.
    const other = JSON.stringify({ note: 'x' });
    expect((await send('get-balance', other, spec(p, other))).status).toBe(200);
  });
});
